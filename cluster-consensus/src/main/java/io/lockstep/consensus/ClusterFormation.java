package io.lockstep.consensus;

import org.agrona.collections.IntArrayList;

/**
 * Whether this member may take part in elections, and the cluster identity it holds.
 * <p>
 * <b>New members wait.</b> A member whose data holds no log and no right to vote may have been wiped: in a life it no
 * longer remembers it may have voted, or held entries the cluster committed. Voting now, it could help elect a
 * leader that lacks those entries, and two wiped members could elect a leader beside the cluster. So a new member
 * neither votes nor stands until one of two things has happened, and then it keeps the right in its election state:
 * <ul>
 * <li>it has asked every configured member, standbys included (a pre-vote request used as a question), and in one
 * round each answered that it is new too: at term 0, or unable to vote itself. Then no member holds data that can
 * be trusted in an election, so there is nothing a vote could lose: the members form a cluster. That is how a new
 * cluster forms (a restored backup is trusted: see {@link ClusterIdentity#FORMED_BEFORE_IDENTITIES});</li>
 * <li>a leader has sent it the log and it holds it up to a commit position that covers an entry of that leader's
 * term: such a position covers every entry committed before the term, which is everything the member could have
 * held before it was wiped.</li>
 * </ul>
 * <p>
 * <b>The identity</b> is made by the cluster's first leader (the first one without an identity), carried in appends,
 * snapshot chunks, votes, vote requests, configuration notices and (once sealed) acknowledgements, and kept in every
 * member's election state: a member takes its leader's identity. Once it has seen an entry of its leader's term
 * committed under the identity, the identity is sealed and never changes: every later leader holds that entry, and
 * it came with that identity. A sealed member refuses appends and snapshots from a leader of another identity or of
 * none ({@link #acceptLeader}), and ignores votes, vote requests and notices ({@link #acceptPeer}) and
 * acknowledgements ({@link #acceptAcknowledgement}) of another identity, so a member of another cluster, or a data
 * directory copied from one, never takes that leader's log nor counts in its elections or commits (a restored
 * backup carries no identity, and takes its leader's).
 */
final class ClusterFormation
{
    private static final System.Logger LOGGER = System.getLogger(ClusterFormation.class.getName());

    private final int memberId;
    /** The identity each peer's last refused acknowledgement named (recorded once per identity). */
    private final long[] refusedAckHigh = new long[ConsensusConfig.MAX_MEMBERS];
    private final long[] refusedAckLow = new long[ConsensusConfig.MAX_MEMBERS];
    private final ElectionStateStore store;
    private final RaftLog log;
    private final Membership membership;
    private final MemberErrors errors;
    private ClusterIdentity identity;
    /** Members that answered this member's latest round of questions as new, as bits by member id. */
    private long newMembers;
    /** A voter answered with a term: a cluster has formed, and this member waits for its leader. */
    private boolean formedElsewhere;
    private boolean askedBefore;
    /**
     * With the log's promise lost: this member's term when it started. It may have acknowledged frames, since lost,
     * to a leader of that term or an earlier one, which may still count them; only a leader of a later term, which
     * holds every committed frame, can show by its commit that this member's log holds them all.
     */
    private final long promiseLostBy;

    ClusterFormation(
        final int memberId,
        final ElectionStateStore store,
        final RaftLog log,
        final Membership membership,
        final MemberErrors errors)
    {
        this.memberId = memberId;
        this.store = store;
        this.log = log;
        this.membership = membership;
        this.errors = errors;
        this.identity = store.identity();
        this.promiseLostBy = null == log.promiseLost() ? -1 : store.term();
        if (!identity.mayElect() && otherMembers() == 0 && membership.isVoter(memberId))
        {
            found(); // a cluster of one: there is no one to ask, and no one else's data to lose
        }
    }

    /** @return true once this member may vote and stand for election. */
    boolean mayElect()
    {
        return identity.mayElect();
    }

    ClusterIdentity identity()
    {
        return identity;
    }

    /**
     * A new member's election timeout: ask the voters for their terms (a pre-vote request each). It goes on asking
     * after one has answered with a term, though it then only waits for a leader: asking is also how it hears of a
     * newer membership (a member on a newer epoch answers with a notice).
     *
     * @return 1 (it asked).
     */
    int ask(final MemberProtocolPublisher publisher, final PeerState[] peers, final long term, final long lastTerm)
    {
        newMembers = 0; // answers count within one round of questions, never pieced together across rounds
        if (!askedBefore)
        {
            askedBefore = true;
            LOGGER.log(System.Logger.Level.INFO, "member {0} has no log and no vote: it neither votes nor stands " +
                "until a leader has sent it the log, unless every configured member answers that it is new too " +
                "(then they form a cluster)", memberId);
        }
        publisher.requestVotes(peers, term + 1, memberId, lastTerm, log.pendingPosition(), true, false);
        return 1;
    }

    /**
     * A member that may not vote was asked for one: it answers a pre-vote request with its term (which tells a new
     * member whether this one is new too) and grants nothing.
     */
    void answer(
        final MemberProtocolPublisher publisher, final int candidateId, final long term, final long candidateTerm,
        final boolean preVote)
    {
        if (preVote)
        {
            publisher.vote(candidateId, term, memberId, candidateTerm, false, true);
        }
    }

    /**
     * A voter answered this member's pre-vote request. It is new as well if it has never heard of a term, or if it
     * may not vote either (wiped, or restored from a backup).
     *
     * @param voterMayElect false if the voter said it may not vote.
     */
    void onAnswer(final int voterId, final long voterTerm, final boolean voterMayElect)
    {
        if (identity.mayElect() || formedElsewhere || (otherMembers() & (1L << voterId)) == 0)
        {
            return;
        }
        if (voterTerm > 0 && voterMayElect)
        {
            if (!formedElsewhere)
            {
                formedElsewhere = true;
                LOGGER.log(System.Logger.Level.INFO, "member {0} is new but member {1} is at term {2}: a cluster " +
                    "has formed, and this member waits for its leader to send it the log", memberId, voterId,
                    voterTerm);
            }
            return;
        }
        newMembers |= 1L << voterId;
        if ((newMembers & otherMembers()) == otherMembers())
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0}: every configured member ({1}) is new, so a new " +
                "cluster forms", memberId, describe(otherMembers() | 1L << memberId));
            found();
        }
    }

    /**
     * @return true if this member's identity is sealed and a peer's names the same cluster: only then does the peer's
     * word about what it holds count (OwedFrames).
     */
    boolean isOwnCluster(final long high, final long low)
    {
        return identity.sealed() && identity.high() == high && identity.low() == low;
    }

    /**
     * A peer's vote, vote request or configuration notice: once sealed, this member takes none that names another
     * cluster (a member pointed at the wrong peers with the same secret would otherwise count in its elections, or
     * move it to its membership). One that names none is taken: a member that
     * has not heard a leader since it was formed, restored or upgraded does not know the identity yet, and until it
     * does, a leader may need its vote to be elected and tell it.
     *
     * @return false if the message must be ignored.
     */
    boolean acceptPeer(final long high, final long low, final int peerId, final String what)
    {
        if (!namesAnotherCluster(high, low))
        {
            return true;
        }
        refuse(Integer.toString(peerId), high, low, what + " are ignored");
        return false;
    }

    /**
     * A peer's acknowledgement of an append or a snapshot chunk: taken as {@link #acceptPeer} takes a vote (one of
     * another cluster's member at this leader's term would otherwise count towards its commits). Acknowledgements
     * come at the replication rate, not once an election, so a refusal is recorded once for each identity a peer
     * names, not for every message: the record builds strings on the member's thread.
     *
     * @return false if the acknowledgement must be ignored.
     */
    boolean acceptAcknowledgement(final long high, final long low, final int peerId, final String what)
    {
        if (!namesAnotherCluster(high, low))
        {
            return true;
        }
        if (peerId < 0 || peerId >= refusedAckHigh.length || refusedAckHigh[peerId] != high ||
            refusedAckLow[peerId] != low)
        {
            if (peerId >= 0 && peerId < refusedAckHigh.length)
            {
                refusedAckHigh[peerId] = high;
                refusedAckLow[peerId] = low;
            }
            refuse(Integer.toString(peerId), high, low, what + " are ignored");
        }
        return false;
    }

    /** @return true if this member is sealed and a peer's message names a cluster other than its own. */
    private boolean namesAnotherCluster(final long high, final long low)
    {
        return identity.sealed() && ClusterIdentity.isIdentity(high, low) &&
            (high != identity.high() || low != identity.low());
    }

    /** Record why a peer's message is refused: the two identities, or that the peer names none. */
    private void refuse(final String peer, final long high, final long low, final String outcome)
    {
        errors.record("cluster-identity", "member " + memberId + " belongs to cluster " + identity.text() +
            "; member " + peer + (ClusterIdentity.isIdentity(high, low) ? " belongs to cluster " +
            ClusterIdentity.toText(high, low) : " names no cluster") + ": its " + outcome);
    }

    /**
     * A leader whose term this member accepts sent an append or a snapshot chunk. Take its identity, or refuse it.
     *
     * @return false if the message must be refused: this member's identity is sealed and the leader names another
     * cluster or none.
     */
    boolean acceptLeader(final long high, final long low, final long leaderTerm, final int leaderId)
    {
        if (high == identity.high() && low == identity.low() && identity.known())
        {
            return true;
        }
        if (identity.sealed())
        {
            // A leader that names none is of the previous protocol version, and moving to this one is a full stop
            // and start: once sealed, a member cannot tell such a leader from one that leaves the field out to pass.
            refuse(leaderId + ", leading term " + leaderTerm + ",", high, low, "appends and snapshots are refused (a " +
                "member of another cluster, a data directory copied from one, or an older version)");
            return false;
        }
        if (!ClusterIdentity.isIdentity(high, low))
        {
            return true;
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} takes cluster identity {1} from member {2} (term {3})",
            memberId, ClusterIdentity.toText(high, low), leaderId, leaderTerm);
        save(new ClusterIdentity(high, low, identity.mayElect(), false));
        return true;
    }

    /**
     * This member now leads: a cluster's first leader makes the identity, before its first append carries it.
     *
     * @param high from the member's seeded randomness (48 bits of entropy in all: enough to tell clusters apart; the
     *             identity is no secret).
     * @param low  from the same.
     */
    void onLeading(final long high, final long low)
    {
        if (!identity.known())
        {
            final long safeHigh = Long.MIN_VALUE == high || (0 == high && 0 == low) ? 1 : high;
            save(new ClusterIdentity(safeHigh, low, identity.mayElect(), false));
            LOGGER.log(System.Logger.Level.INFO, "member {0} leads the first term of a new cluster, whose identity " +
                "is {1}", memberId, identity.text());
        }
    }

    /**
     * The commit position moved. Once it covers an entry of the current leader's term and this member holds the log
     * up to it, the member holds everything committed: it may vote (it holds everything committed before the term)
     * and its identity is sealed. A promise it had lost is kept again (it may vouch for what it holds) only by such a
     * commit of a term later than its own when it started, held durably (see {@link #promiseLostBy}).
     *
     * @param commitPosition this member's commit position.
     * @param term           the current term.
     * @param termIndex      where each term starts in this member's log.
     */
    void onCommit(final long commitPosition, final long term, final TermIndex termIndex)
    {
        final boolean promiseLost = null != log.promiseLost();
        if (identity.mayElect() && identity.sealed() && !promiseLost)
        {
            return;
        }
        final long termStart = termIndex.startOf(term);
        if (termStart < 0 || commitPosition <= termStart || log.pendingPosition() < commitPosition)
        {
            return;
        }
        if (promiseLost && term > promiseLostBy && log.promisedPosition() >= commitPosition)
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} durably holds the log of term {1,number,#} up to its " +
                "commit at {2,number,#}: its log''s promise, lost before, is kept again, and it answers for what it " +
                "holds", memberId, term, commitPosition);
            log.promiseKeptAgain();
        }
        if (!identity.mayElect())
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} holds the committed log up to {1,number,#}: it may " +
                "vote and stand for election again", memberId, commitPosition);
        }
        save(new ClusterIdentity(identity.high(), identity.low(), true, identity.known()));
    }

    /**
     * The operator's {@code tool promote} made this member a voter of a new epoch after the loss of the primary
     * zone: it chose this zone's data, so the member takes part from now on, even if it had not yet seen a commit of
     * its leader's term. Only the tool's own request does this: a member that merely hears of the newer epoch from
     * a peer (a notice) may have been wiped since it last took part, and waits as any new member does.
     */
    void onPromoted()
    {
        if (!identity.mayElect() && membership.isVoter(memberId))
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} is a voter of promoted membership {1}: it may vote and " +
                "stand for election", memberId, membership.describe());
            found();
        }
    }

    /**
     * A newer epoch was adopted (from a peer's notice, or the tool). A standby that holds log and becomes a voter by
     * it was promoted with its zone: as a standby it never voted and its acknowledgements counted toward no commit,
     * so nothing it could have forgotten matters, and its votes are what the promoted zone elects with. A member with
     * an empty log gets nothing from this: it may be a voter of that epoch that was wiped since, and it waits as any
     * new member does.
     *
     * @param wasStandby the member was a standby (a learner) in the configuration it held before.
     */
    void onEpochLearned(final boolean wasStandby)
    {
        if (!identity.mayElect() && wasStandby && membership.isVoter(memberId) && log.pendingPosition() > 0)
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0}, a standby with a log, is a voter of promoted " +
                "membership {1}: it may vote and stand for election", memberId, membership.describe());
            found();
        }
    }

    private void found()
    {
        save(new ClusterIdentity(identity.high(), identity.low(), true, identity.sealed()));
    }

    private void save(final ClusterIdentity next)
    {
        if (!next.equals(identity))
        {
            store.saveIdentity(next);
            identity = next;
        }
    }

    /**
     * Every member this member knows of, voters and standbys alike: for a new member that is the configuration
     * file's list, which after membership changes may name as voters members that are not (the file only seeds a
     * cluster), so all of them must be new.
     */
    private long otherMembers()
    {
        return (membership.voters() | membership.learners()) & ~(1L << memberId);
    }

    /** @return member ids of a bit set, as [0, 2]. */
    static String describe(final long members)
    {
        final IntArrayList ids = new IntArrayList();
        for (long rest = members; rest != 0; rest &= rest - 1)
        {
            ids.addInt(Long.numberOfTrailingZeros(rest));
        }
        return ids.toString();
    }
}
