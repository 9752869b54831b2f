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
 * <li>it has asked every configured voter (a pre-vote request used as a question) and each answered that it is new
 * too: at term 0, or unable to vote itself. Then no member holds data that can be trusted in an election, so there
 * is nothing a vote could lose: the members form a cluster. That is how a new cluster forms, and how one whose
 * every member was restored from a backup starts again;</li>
 * <li>a leader has sent it the log and it holds it up to a commit position that covers an entry of that leader's
 * term: such a position covers every entry committed before the term, which is everything the member could have
 * held before it was wiped.</li>
 * </ul>
 * <p>
 * <b>The identity</b> is made by the cluster's first leader (the first one without an identity), carried in every
 * append and kept in every member's election state: a member takes its leader's identity. Once it has seen an entry
 * of its leader's term committed under the identity, the identity is sealed and never changes: every later leader
 * holds that entry, and it came with that identity. A sealed member refuses appends from a leader of another
 * identity, so a member of another cluster, or a data directory restored from another cluster, never mixes its log
 * with this one.
 */
final class ClusterFormation
{
    private static final System.Logger LOGGER = System.getLogger(ClusterFormation.class.getName());

    private final int memberId;
    private final ElectionStateStore store;
    private final RaftLog log;
    private final Membership membership;
    private final MemberErrors errors;
    private ClusterIdentity identity;
    /** Voters that answered this member's question at term 0, as bits by member id. */
    private long newVoters;
    /** A voter answered with a term: a cluster has formed, and this member waits for its leader. */
    private boolean formedElsewhere;
    private boolean askedBefore;

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
        if (!identity.mayElect() && otherVoters() == 0 && membership.isVoter(memberId))
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
        if (identity.mayElect() || voterId == memberId || !membership.isVoter(voterId))
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
        newVoters |= 1L << voterId;
        if ((newVoters & otherVoters()) == otherVoters())
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0}: every configured voter ({1}) is new, so a new " +
                "cluster forms", memberId, describe(membership.voters()));
            found();
        }
    }

    /**
     * A leader whose term this member accepts sent an append. Take its identity, or refuse it.
     *
     * @return false if the append must be refused: this member's identity is sealed and the leader's differs.
     */
    boolean acceptLeader(final long high, final long low, final long leaderTerm, final int leaderId)
    {
        if (!ClusterIdentity.isIdentity(high, low) || (high == identity.high() && low == identity.low()))
        {
            return true;
        }
        if (identity.sealed())
        {
            errors.record("cluster-identity", "member " + memberId + " belongs to cluster " + identity.text() +
                "; member " + leaderId + ", leading term " + leaderTerm + ", belongs to cluster " +
                ClusterIdentity.toText(high, low) + ": its appends are refused (a member of another cluster, or a " +
                "data directory restored from another cluster)");
            return false;
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} takes cluster identity {1} from member {2} (term {3})",
            memberId, ClusterIdentity.toText(high, low), leaderId, leaderTerm);
        save(new ClusterIdentity(high, low, identity.mayElect(), false));
        return true;
    }

    /**
     * This member now leads: a cluster's first leader makes the identity, before its first append carries it.
     *
     * @param high from the member's seeded randomness.
     * @param low  from the member's seeded randomness and its clock.
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
     * up to it, the member may vote (it holds everything committed before the term) and its identity is sealed.
     *
     * @param commitPosition this member's commit position.
     * @param term           the current term.
     * @param termIndex      where each term starts in this member's log.
     */
    void onCommit(final long commitPosition, final long term, final TermIndex termIndex)
    {
        if (identity.mayElect() && identity.sealed())
        {
            return;
        }
        final long termStart = termIndex.startOf(term);
        if (termStart < 0 || commitPosition <= termStart || log.pendingPosition() < commitPosition)
        {
            return;
        }
        if (!identity.mayElect())
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} holds the committed log up to {1}: it may vote and " +
                "stand for election again", memberId, commitPosition);
        }
        save(new ClusterIdentity(identity.high(), identity.low(), true, identity.known()));
    }

    /**
     * A newer membership epoch was adopted. If it made this member a voter (a standby promoted after the loss of
     * the primary zone), the operator's promotion chose this zone's data: the member takes part from now on, even if
     * it had not yet seen a commit of its leader's term.
     */
    void onMembershipAdopted()
    {
        if (!identity.mayElect() && membership.isVoter(memberId))
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} is a voter of promoted membership {1}: it may vote and " +
                "stand for election", memberId, membership.describe());
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

    private long otherVoters()
    {
        return membership.voters() & ~(1L << memberId);
    }

    private static String describe(final long members)
    {
        final IntArrayList ids = new IntArrayList();
        for (long rest = members; rest != 0; rest &= rest - 1)
        {
            ids.addInt(Long.numberOfTrailingZeros(rest));
        }
        return ids.toString();
    }
}
