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
 *     its answer (not new, wiped or restored, and its promise not lost), a position past every other voter's log and
 *     promise was held by this member alone. A frame ending past it was never committed (that takes a majority),
 *     and never can be: no one holds it to send it on, and a leader still counting this member's old
 *     acknowledgement of it would itself hold it, and would have said so. The promise comes down to that reach,
 *     or to the log's end if the log reaches further, and if that covers the log the member no longer owes and
 *     may stand;</li>
 *     <li>what is left may have been committed. Where no voter's log reaches (from the furthest log to the
 *     promise), those frames are held nowhere the cluster can read them: the member says so, naming the positions
 *     and the voters that may have acknowledged them, and an operator decides (restore the cluster from a backup,
 *     or accept the loss). Otherwise a voter that holds them can still lead, and the member waits for it.</li>
 * </ul>
 * Every other voter must answer, not a majority: with five members a majority would leave room for a voter that
 * holds the frame and has not answered, and counting every voter needs no new term to fence off a leader of an
 * older one. Answers to an older round, or given while this member's promise was another, are ignored: they may
 * describe logs from before the loss. Member thread only, no I/O: the agent sends what {@link #ask} builds.
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
    private final long[] answeredRound = new long[ConsensusConfig.MAX_MEMBERS];
    private final boolean[] known = new boolean[ConsensusConfig.MAX_MEMBERS];
    private final long[] answeredVersion = new long[ConsensusConfig.MAX_MEMBERS];
    private final long[] logPosition = new long[ConsensusConfig.MAX_MEMBERS];
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
    int ask(final PeerState[] peers, final long term)
    {
        round++;
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
     * member that took part all along (not new, wiped or restored) with its promise kept.
     */
    void answer(final int askerId, final long term, final long askerTerm, final long askerRound)
    {
        if (membership.isMember(memberId))
        {
            publisher.holdings(askerId, term, memberId, askerTerm, askerRound,
                formation.mayElect() && null == log.promiseLost(), log.pendingPosition(), log.promisedPosition());
        }
    }

    /**
     * A voter's answer. Decides once every other voter has answered the current round.
     */
    void onAnswer(
        final int voterId,
        final long answerRound,
        final boolean answerKnown,
        final long configVersion,
        final long answerLogPosition,
        final long answerPromisedPosition)
    {
        if (answerRound != round || voterId == memberId || voterId < 0 || voterId >= ConsensusConfig.MAX_MEMBERS)
        {
            return;
        }
        answeredRound[voterId] = answerRound;
        known[voterId] = answerKnown;
        answeredVersion[voterId] = configVersion;
        logPosition[voterId] = answerLogPosition;
        promisedPosition[voterId] = answerPromisedPosition;
        if (allAnswered())
        {
            decide();
        }
    }

    /** No longer owing (frames came back from a leader, or the promise came down): nothing is held nowhere. */
    void onDutyCycle(final boolean owes)
    {
        if (!owes && 0 != metrics.get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE))
        {
            metrics.set(MemberMetrics.OWED_FRAMES_HELD_NOWHERE, 0);
        }
    }

    private boolean allAnswered()
    {
        final long voters = membership.voters();
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (id != memberId && 0 != (voters & (1L << id)) && answeredRound[id] != round)
            {
                return false;
            }
        }
        return true;
    }

    private void decide()
    {
        final long promised = log.promisedPosition();
        if (promised != askedPromisedPosition || log.promisedTerm() != askedPromisedTerm)
        {
            return; // the promise moved since the question: the answers may not cover what it owes now
        }
        final long voters = membership.voters();
        long reach = 0;
        long logReach = 0;
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (id == memberId || 0 == (voters & (1L << id)))
            {
                continue;
            }
            if (!known[id] || answeredVersion[id] != membership.version())
            {
                return; // an answer nobody can vouch for, or another configuration: the frames stay owed
            }
            reach = Math.max(reach, Math.max(logPosition[id], promisedPosition[id]));
            logReach = Math.max(logReach, logPosition[id]);
        }
        final long end = log.pendingPosition();
        if (reach < promised)
        {
            final long to = Math.max(end, reach);
            // At the log's end, the term of its last frame; between the end and the promise, the frame's term is
            // unknown and the promise's is kept: no lower than the truth, so a voter is never less strict.
            log.lowerPromise(to, to == end ? termIndex.lastTerm() : askedPromisedTerm);
            metrics.increment(MemberMetrics.OWED_FRAMES_RELEASED);
            LOGGER.log(System.Logger.Level.WARNING, "member {0} released frames it owed from {1,number,#} to " +
                "{2,number,#}: the log and promise of every other voter end at or below {3,number,#}, so they " +
                "were never committed", memberId, to, promised, reach);
        }
        if (!LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            return;
        }
        final long heldTo = Math.max(end, logReach);
        if (heldTo < log.promisedPosition())
        {
            metrics.set(MemberMetrics.OWED_FRAMES_HELD_NOWHERE, 1);
            errors.record("lost-frames", "member " + memberId + " owes log frames from position " + heldTo + " to " +
                log.promisedPosition() + " that may have been committed, and no voter's log reaches them: this " +
                "member and " + acknowledgedBy(heldTo) + " may have acknowledged them and lost them; the cluster " +
                "waits: restore it from a backup that holds them, or accept their loss (deploy guide, frames lost " +
                "on several members)");
        }
    }

    private String acknowledgedBy(final long heldTo)
    {
        final StringBuilder members = new StringBuilder();
        final long voters = membership.voters();
        for (int id = 0; id < ConsensusConfig.MAX_MEMBERS; id++)
        {
            if (id != memberId && 0 != (voters & (1L << id)) && promisedPosition[id] > heldTo)
            {
                members.append(members.length() == 0 ? "member " : ", member ").append(id);
            }
        }
        return members.length() == 0 ? "no other member" : members.toString();
    }
}
