package io.lockstep.consensus;

/**
 * Protocol-aware recovery of log frames a member lost but may have acknowledged (it owes them: its log ends below its
 * promise, see {@link LogOrder}). Such a member neither stands nor votes short, which keeps every committed entry
 * safe. But when frames were lost on more than one member, nobody may be able to lead and the cluster waits, even
 * where the protocol can tell that what was lost was never committed (Alagappan et al., "Protocol-Aware Recovery
 * for Consensus-Based Storage", FAST 2018). This member asks the others, and decides position by position:
 * <ul>
 *     <li>each election timeout in which it owes frames and hears no leader, it asks every other voter, in a
 *     numbered round, how far its log reaches (frames not yet written included) and what it promised;</li>
 *     <li>once every other voter has answered the round, each on the same configuration and each able to vouch for
 *     its answer (not new or wiped, of this member's own sealed cluster identity, its promise not lost), and if the
 *     other voters are a quorum by themselves, a position past every other voter's log and promise was held by
 *     this member alone. A frame ending past it was never committed (that takes a majority),
 *     and never can be: no one holds it to send it on, and a leader still counting this member's old
 *     acknowledgement of it would itself hold it, and would have said so. The promise comes down to that reach,
 *     or to the log's end if the log reaches further, and if that covers the log the member no longer owes and
 *     may stand;</li>
 *     <li>what is left may have been committed. If no other voter's log is as up to date as the promise, those
 *     frames are held nowhere the cluster can read them: the member says so, naming the positions and the voters
 *     that may have acknowledged them, and an operator decides (restore the cluster from a backup, or accept the
 *     loss). Otherwise a voter that holds them can still lead, and the member waits for it.</li>
 * </ul>
 * Every other voter must answer, not a majority: with five members a majority would leave room for a voter that
 * holds the frame and has not answered, and counting every voter needs no new term to fence off a leader of an
 * older one. Answers to an older round, or given while this member's promise was another, are ignored: they may
 * describe logs from before the loss. The other voters are trusted to answer truly, as Raft trusts their votes: a
 * member whose data was rolled back (a file copy, a backup restored into one member) can make this one release
 * frames that were committed. Member thread only; it sends through the publisher, and lowering the promise writes
 * and forces the promise file, as a conflict cut does.
 */
final class OwedFrames
{
    private static final System.Logger LOGGER = System.getLogger(OwedFrames.class.getName());

    private final int memberId;
    private final RaftLog log;
    private final TermIndex termIndex;
    private final Membership membership;
    private final ClusterFormation formation;
    private final MemberProtocolPublisher publisher;
    private final MemberMetrics metrics;
    private final MemberErrors errors;

    private long round;
    private long askedPromisedPosition = -1;
    private long askedPromisedTerm;
    /** The range last named as held nowhere (named once, not every round). */
    private long namedFrom = -1;
    private long namedTo = -1;
    /** Why the last round could not decide (said once per change): voters unanswered, unvouched, elsewhere. */
    private long saidUnanswered;
    private long saidUnvouched;
    private long saidOtherConfiguration;
    private boolean saidTooFewVoters;
    private final long[] answeredRound = new long[ConsensusConfig.MAX_MEMBERS];
    private final boolean[] vouched = new boolean[ConsensusConfig.MAX_MEMBERS];
    private final long[] answeredVersion = new long[ConsensusConfig.MAX_MEMBERS];
    private final long[] logPosition = new long[ConsensusConfig.MAX_MEMBERS];
    private final long[] lastLogTerm = new long[ConsensusConfig.MAX_MEMBERS];
    private final long[] promisedPosition = new long[ConsensusConfig.MAX_MEMBERS];

    OwedFrames(
        final int memberId,
        final RaftLog log,
        final TermIndex termIndex,
        final Membership membership,
        final ClusterFormation formation,
        final MemberProtocolPublisher publisher,
        final MemberMetrics metrics,
        final MemberErrors errors)
    {
        this.memberId = memberId;
        this.log = log;
        this.termIndex = termIndex;
        this.membership = membership;
        this.formation = formation;
        this.publisher = publisher;
        this.metrics = metrics;
        this.errors = errors;
    }

    /**
     * Start a round: ask every other voter what it holds.
     *
     * @return 1: work done.
     */
    int ask(final PeerState[] peers, final long term, final long nowNs)
    {
        if (!othersAreAQuorum())
        {
            if (!saidTooFewVoters)
            {
                saidTooFewVoters = true;
                LOGGER.log(System.Logger.Level.WARNING, "member {0} owes frames and does not ask the others " +
                    "whether they were committed: the other voters are not a quorum by themselves", memberId);
            }
            return 0;
        }
        final long unanswered = unanswered();
        if (0 != unanswered)
        {
            sayWhyUndecided(unanswered, 0, 0);
        }
        // From the clock, not from 1: a round number is not reused by the next process of this member.
        round = Math.max(round + 1, nowNs);
        askedPromisedPosition = log.promisedPosition();
        askedPromisedTerm = log.promisedTerm();
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                publisher.askHoldings(peer.id, term, memberId, termIndex.lastTerm(), log.pendingPosition(), round);
            }
        }
        return 1;
    }

    /**
     * Another member's question: say what this one holds. What it may have acknowledged is vouched for only by a
     * member that took part all along (not new or wiped), whose identity is sealed (it has held a committed entry
     * under it: a restored backup has not, until it follows a leader), with its promise kept.
     */
    void onQuestion(final int askerId, final long term, final long askerTerm, final long askerRound)
    {
        if (membership.isMember(memberId))
        {
            publisher.holdings(askerId, term, memberId, askerTerm, askerRound,
                formation.mayElect() && formation.identity().sealed() && null == log.promiseLost(),
                log.pendingPosition(), termIndex.lastTerm(), log.promisedPosition());
        }
    }

    /**
     * A voter's answer. Decides once every other voter has answered the current round.
     */
    void onAnswer(
        final int voterId,
        final long answerRound,
        final boolean vouched,
        final long configVersion,
        final long answerLogPosition,
        final long answerLastLogTerm,
        final long answerPromisedPosition)
    {
        if (answerRound != round || voterId == memberId || voterId < 0 || voterId >= ConsensusConfig.MAX_MEMBERS)
        {
            return;
        }
        answeredRound[voterId] = answerRound;
        this.vouched[voterId] = vouched;
        answeredVersion[voterId] = configVersion;
        logPosition[voterId] = answerLogPosition;
        lastLogTerm[voterId] = answerLastLogTerm;
        promisedPosition[voterId] = answerPromisedPosition;
        if (allAnswered())
        {
            decide();
        }
    }

    /**
     * No longer owing (frames came back from a leader, or the promise came down): nothing is held nowhere, and a
     * later loss is named and explained afresh. Also the gauge of a lost promise (kept here, with what this member may
     * vouch for: it changes when {@code ClusterFormation.onCommit} finds the promise kept again).
     */
    void onDutyCycle(final boolean owes)
    {
        metrics.set(MemberMetrics.LOG_PROMISE_LOST, null == log.promiseLost() ? 0 : 1);
        if (!owes && askedPromisedPosition >= 0)
        {
            metrics.set(MemberMetrics.OWED_FRAMES_HELD_NOWHERE, 0);
            askedPromisedPosition = -1;
            namedFrom = -1;
            namedTo = -1;
            saidTooFewVoters = false;
            saidUnanswered = 0;
            saidUnvouched = 0;
            saidOtherConfiguration = 0;
        }
    }

    /**
     * A round that cannot decide says why in the member's log, once for each change (not every round): an operator
     * waiting on it knows whom to start or fix.
     */
    private void sayWhyUndecided(final long unanswered, final long unvouched, final long otherConfiguration)
    {
        if (unanswered == saidUnanswered && unvouched == saidUnvouched && otherConfiguration == saidOtherConfiguration)
        {
            return;
        }
        saidUnanswered = unanswered;
        saidUnvouched = unvouched;
        saidOtherConfiguration = otherConfiguration;
        LOGGER.log(System.Logger.Level.WARNING, "member {0} owes frames and cannot yet tell whether they were " +
            "committed: no answer from voters {1}; answers it cannot count (new, wiped or restored members, a lost " +
            "promise, another cluster) from {2}; another configuration at {3}", memberId,
            ClusterFormation.describe(unanswered), ClusterFormation.describe(unvouched),
            ClusterFormation.describe(otherConfiguration));
    }

    private long unanswered()
    {
        long members = 0;
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (isOtherVoter(id) && answeredRound[id] != round && round > 0)
            {
                members |= 1L << id;
            }
        }
        return members;
    }

    private boolean allAnswered()
    {
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (isOtherVoter(id) && answeredRound[id] != round)
            {
                return false;
            }
        }
        return true;
    }

    private void decide()
    {
        final long promised = log.promisedPosition();
        if (promised != askedPromisedPosition || log.promisedTerm() != askedPromisedTerm ||
            !LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            return; // the promise moved since the question, or nothing is owed now: the answers are for another
        }
        final long end = log.pendingPosition();
        long unvouched = 0;
        long otherConfiguration = 0;
        long reach = 0;
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (isOtherVoter(id))
            {
                unvouched |= vouched[id] ? 0 : 1L << id;
                otherConfiguration |= answeredVersion[id] != membership.version() ? 1L << id : 0;
                reach = Math.max(reach, Math.max(logPosition[id], promisedPosition[id]));
            }
        }
        if (0 != (unvouched | otherConfiguration))
        {
            // The frames stay owed; whether anyone's log holds them can still be said.
            sayWhyUndecided(0, unvouched, otherConfiguration);
            reportIfHeldNowhere(end);
            return;
        }
        saidUnanswered = 0;
        saidUnvouched = 0;
        saidOtherConfiguration = 0;
        final long to = Math.max(end, reach);
        if (to < promised)
        {
            // At the log's end, the term of its last frame; between the end and the promise, the frame's term is
            // unknown and the promise's is kept: no lower than the truth, so a voter is never less strict.
            log.lowerPromise(to, to == end ? termIndex.lastTerm() : askedPromisedTerm);
            metrics.increment(MemberMetrics.OWED_FRAMES_RELEASED);
            LOGGER.log(System.Logger.Level.WARNING, "member {0} released frames it owed from {1,number,#} to " +
                "{2,number,#}: the log and promise of every other voter end at or below {3,number,#}, so they " +
                "were never committed", memberId, to, promised, reach);
        }
        if (LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            reportIfHeldNowhere(end);
        }
    }

    /**
     * The others' word outweighs this member's acknowledgement only if they alone are a quorum. With two voters, a
     * peer rolled back (a file copy, a restored backup) would otherwise make this one drop frames both had
     * committed, where Raft would wait; and a voter added with the lost frames (two voters becoming three) could have
     * made a majority with this member alone, unasked.
     */
    private boolean othersAreAQuorum()
    {
        return Long.bitCount(membership.voters() & ~(1L << memberId)) >= membership.quorum();
    }

    /**
     * What is still owed may have been committed. If no other voter's log is as up to date as the promise (Raft's
     * order: last term, then position), no one can win this member's vote, and no one can send it the frames: the
     * cluster waits for an operator. Named once per range, not every round.
     */
    private void reportIfHeldNowhere(final long end)
    {
        boolean heldSomewhere = false;
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            heldSomewhere |= isOtherVoter(id) && LogOrder.atLeastAsUpToDate(lastLogTerm[id], logPosition[id],
                log.promisedTerm(), log.promisedPosition());
        }
        metrics.set(MemberMetrics.OWED_FRAMES_HELD_NOWHERE, heldSomewhere ? 0 : 1);
        if (!heldSomewhere && (end != namedFrom || log.promisedPosition() != namedTo))
        {
            namedFrom = end;
            namedTo = log.promisedPosition();
            final String what = "member " + memberId + " owes log frames from position " + end + " to " + namedTo +
                " that may have been committed, and no voter's log holds them all: this member and " +
                acknowledgedBy(end) + " may have acknowledged them and lost them; the cluster waits: restore it " +
                "from a backup that holds them, or accept their loss (deploy guide, frames lost on several members)";
            LOGGER.log(System.Logger.Level.ERROR, what);
            errors.record("lost-frames", what);
        }
    }

    private String acknowledgedBy(final long end)
    {
        final StringBuilder members = new StringBuilder();
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (isOtherVoter(id) && promisedPosition[id] > end)
            {
                members.append(members.length() == 0 ? "member " : ", member ").append(id);
            }
        }
        return members.length() == 0 ? "no other member" : members.toString();
    }

    private boolean isOtherVoter(final int id)
    {
        return id != memberId && 0 != (membership.voters() & (1L << id));
    }
}
