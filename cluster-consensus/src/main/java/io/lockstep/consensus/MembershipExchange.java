package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;

/**
 * How members agree on the membership epoch: every member-to-member message carries its sender's epoch; a message
 * on another epoch is dropped and its sender told this member's (ConfigurationNotice); whichever side is older adopts
 * the newer, durably, and the conductor acts on it ({@link ConsensusAgent#onMembershipAdopted()}). Two messages at
 * most after a promotion, a member of the retired configuration that speaks to one of the new knows it is removed.
 */
public final class MembershipExchange
{
    private static final System.Logger LOGGER = System.getLogger(MembershipExchange.class.getName());

    private final ConsensusAgent agent;
    private final Membership membership;
    private final MemberProtocolPublisher publisher;
    private final MemberErrors errors;
    private final ElectionStateStore store;
    private String diverged;
    private long confirmedEpoch;
    private final RaftLog log;
    private final ClusterFormation formation;

    MembershipExchange(
        final ConsensusAgent agent, final Membership membership, final MemberProtocolPublisher publisher,
        final MemberErrors errors,
        final ElectionStateStore store,
        final RaftLog log,
        final ClusterFormation formation)
    {
        this.agent = agent;
        this.membership = membership;
        this.publisher = publisher;
        this.errors = errors;
        this.store = store;
        this.log = log;
        this.formation = formation;
    }

    /**
     * @param senderEpoch the epoch a member-to-member message carries (SBE's null, from a sender before epochs, is 0).
     * @param term        the term the message carries: in no epoch's range of terms beyond the one after this member's
     *                    own epoch and term. A term near the top of all terms would be stored and leave no term to
     *                    stand in; one range of slack lets a member whose term reached the top of its epoch's range
     *                    stand in the next, and nothing below is refused (a member restored from a backup holds the
     *                    terms of the epoch the backup was taken in, and a crash between storing an adopted epoch and
     *                    the term raised with it leaves a term below that epoch's range).
     * @return true if the sender is on this member's epoch and its term within the bound: the message may be handled.
     * (A configuration notice carries no term and is not admitted here: a newer epoch it announces is adopted with
     * that epoch's first term.)
     */
    boolean admit(final int from, final long senderEpoch, final long term)
    {
        if ((Long.MIN_VALUE == senderEpoch ? 0 : senderEpoch) != membership.epoch())
        {
            publisher.configurationNotice(from, agent.memberId());
            return false;
        }
        final long ownRange = Math.max(membership.epoch(), Membership.epochOfTerm(agent.term()));
        if (Membership.epochOfTerm(term) > ownRange + 1)
        {
            errors.record("term-out-of-range", "dropped a message from member " + from + " in term " + term +
                ", more than one membership epoch's range of terms above this member's term " + agent.term());
            return false;
        }
        return true;
    }

    void onNotice(final int from, final long epoch, final long version, final long voters, final long learners)
    {
        if (epoch < membership.epoch())
        {
            publisher.configurationNotice(from, agent.memberId());
        }
        else if (epoch > membership.epoch())
        {
            adopt(epoch, version, voters, learners, "member " + from);
        }
    }

    /**
     * Tell each other member this member's epoch once per connection, as soon as it is up: a member returning after
     * its zone was replaced learns so from the first promoted member it reaches, well before its election timer can
     * make it stand (the window left is a returning member that reaches its old peers but no promoted one: a
     * partition, which is why {@code tool promote} refuses while the primary looks alive).
     */
    void announce(final PeerState[] peers, final Transport transport)
    {
        for (final PeerState peer : peers)
        {
            if (!transport.isConnected(peer.id))
            {
                peer.epochAnnounced = false;
            }
            else if (!peer.epochAnnounced)
            {
                peer.epochAnnounced = publisher.configurationNotice(peer.id, agent.memberId());
            }
        }
    }

    /**
     * An operator's promotion ({@code tool promote}, run against the standbys): refused unless the epoch is the next
     * one and this member votes in it; a repeat of the same promotion is accepted again, so the tool can retry.
     *
     * @return null if adopted (or already), else why not.
     */
    public String promote(final long epoch, final long voters, final long learners)
    {
        if (epoch == membership.epoch() && voters == membership.voters() && learners == membership.learners())
        {
            formation.onPromoted();
            return null;
        }
        if (epoch != membership.epoch() + 1)
        {
            return "member " + agent.memberId() + " is on membership " + membership.describe() +
                ": a promotion must name epoch " + (membership.epoch() + 1) + ", not " + epoch;
        }
        if ((voters & (1L << agent.memberId())) == 0)
        {
            return "member " + agent.memberId() + " is not among the new voters " + Membership.ids(voters);
        }
        final String refusal = adopt(epoch, 0, voters, learners, "tool promote");
        if (null == refusal)
        {
            formation.onPromoted();
        }
        return refusal;
    }

    /**
     * Adopt a newer epoch, durably, from a tool's promotion or from a member already on it.
     *
     * @return null if adopted, else why not.
     */
    String adopt(final long epoch, final long version, final long voters, final long learners, final String source)
    {
        final boolean wasStandby = membership.isLearner(agent.memberId());
        try
        {
            membership.adopt(epoch, version, voters, learners);
        }
        catch (final IllegalArgumentException ex)
        {
            errors.record("membership", "refused membership from " + source + ": " + ex.getMessage());
            return ex.getMessage();
        }
        LOGGER.log(System.Logger.Level.WARNING, "member {0} adopted membership {1} from {2}", agent.memberId(),
            membership.describe(), source);
        formation.onEpochLearned(wasStandby);
        agent.onMembershipAdopted();
        final String removed = removedReason();
        if (null != removed)
        {
            errors.record("removed", removed);
        }
        return null;
    }

    /**
     * This member applied entries the old configuration committed that the promoted one does not have: it stops
     * rather than serve a state the cluster does not hold (see {@link FollowerLog#DIVERGED}).
     */
    void onDiverged(final long position, final long commitPosition, final int leaderId)
    {
        if (null == diverged)
        {
            diverged = "member " + agent.memberId() + " holds entries committed before the promotion to membership " +
                membership.describe() + " (up to position " + commitPosition + ") that the promoted cluster's " +
                "leader " + leaderId + " does not have (its history parts from this member's at " + position +
                "): they were lost with the primary zone in asynchronous standby mode. This member stops rather " +
                "than serve a state the cluster does not hold; its log is kept. To serve again: tool remove-member, " +
                "wipe its data directory, start it, tool add-member, and tool " +
                "promote-member once it has caught up (docs/how-to/membership.md)";
            errors.record("diverged", diverged);
        }
    }

    /**
     * A leader's append matched this log up to {@code position}: if that covers the commit position, everything
     * this member applied is the history of the leader's epoch.
     */
    void onMatched(final long position, final long commitPosition, final long leaderTerm)
    {
        if (position >= commitPosition)
        {
            confirmedEpoch = Math.max(confirmedEpoch, Membership.epochOfTerm(leaderTerm));
        }
    }

    /**
     * @return true if a leader of the current membership epoch has confirmed this member's applied history (always
     * in epoch 0); false for a member of a promoted epoch not yet compared with its leader.
     */
    public boolean onCurrentHistory()
    {
        return confirmedEpoch >= membership.epoch();
    }

    /** @return true once this member found its committed history is not the promoted cluster's. */
    boolean diverged()
    {
        return null != diverged;
    }

    /**
     * @return why this member takes no further part (removed by a newer membership epoch), or null while it does.
     */
    public String removedReason()
    {
        if (null != diverged)
        {
            return diverged;
        }
        if (!formation.mayElect() && 0 == log.pendingPosition())
        {
            return null; // new, perhaps wiped: not a member until a leader adds it and sends it log
        }
        return Membership.removedReason(agent.memberId(), store);
    }
}
