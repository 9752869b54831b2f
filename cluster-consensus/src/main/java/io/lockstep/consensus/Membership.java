package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;

/**
 * Who votes and who only learns, by epoch. Epoch 0 is what the configuration file seeds (members listed
 * {@code /nonvoting} are learners: warm standbys). A later epoch is adopted when an operator promotes the standbys
 * after the loss of the primary zone ({@code tool promote}): the standbys become the voters and the old voters are
 * neither (removed). Epochs only go up, each is made durable before it is acted on, and every member-to-member
 * message carries the sender's epoch, so a member of a retired configuration that speaks to one on a newer epoch is
 * told (ConfigurationNotice), adopts it, and being removed, stops for good: it can never again lead, vote or commit
 * in a configuration that has been replaced.
 * <p>
 * Sets are bit sets of member ids (ids below {@link ConsensusConfig#MAX_MEMBERS}); every id in them must have an
 * address in the configuration file. Member thread only.
 */
public final class Membership
{
    private final ElectionStateStore store;
    private final long configured;
    private long epoch;
    private long voters;
    private long learners;

    Membership(final ConsensusConfig config, final ElectionStateStore store)
    {
        this.store = store;
        long configured = 0;
        long seedVoters = 0;
        for (final Member m : config.members())
        {
            configured |= 1L << m.id();
            seedVoters |= m.voting() ? 1L << m.id() : 0;
        }
        this.configured = configured;
        if (store.configEpoch() > 0)
        {
            final String problem = problem(store.voters(), store.learners());
            if (null != problem)
            {
                throw new IllegalStateException("the stored membership (epoch " + store.configEpoch() + ") does " +
                    "not fit the configuration file: " + problem);
            }
            epoch = store.configEpoch();
            voters = store.voters();
            learners = store.learners();
        }
        else
        {
            voters = seedVoters;
            learners = configured & ~seedVoters;
        }
    }

    public long epoch()
    {
        return epoch;
    }

    public long voters()
    {
        return voters;
    }

    public long learners()
    {
        return learners;
    }

    public boolean isVoter(final int id)
    {
        return id >= 0 && id < ConsensusConfig.MAX_MEMBERS && (voters & (1L << id)) != 0;
    }

    public boolean isLearner(final int id)
    {
        return id >= 0 && id < ConsensusConfig.MAX_MEMBERS && (learners & (1L << id)) != 0;
    }

    /** @return false once the member has been removed: it takes no part in any configuration. */
    public boolean isMember(final int id)
    {
        return isVoter(id) || isLearner(id);
    }

    /**
     * @return the first term of an epoch: terms of epoch e are e << 32 and up, so that no term is led in two
     * configurations (a lost zone's last terms are unknown to the standbys that replace it).
     */
    static long firstTermOf(final long epoch)
    {
        return epoch << 32;
    }

    /** @return votes that make a majority of the voters. */
    int quorum()
    {
        return Long.bitCount(voters) / 2 + 1;
    }

    /** @return learners that make a majority of the learners (0 with none). */
    int learnerQuorum()
    {
        return 0 == learners ? 0 : Long.bitCount(learners) / 2 + 1;
    }

    /**
     * @return why these sets cannot be a configuration, or null if they can.
     */
    String problem(final long newVoters, final long newLearners)
    {
        if (0 == newVoters)
        {
            return "no voting member";
        }
        if ((newVoters & newLearners) != 0)
        {
            return "members " + ids(newVoters & newLearners) + " both vote and learn";
        }
        if (((newVoters | newLearners) & ~configured) != 0)
        {
            return "members " + ids((newVoters | newLearners) & ~configured) + " have no address in the " +
                "configuration file";
        }
        return null;
    }

    /**
     * Adopt a newer epoch: durable before this returns.
     *
     * @throws IllegalArgumentException if the epoch is not newer or the sets are not a configuration.
     */
    void adopt(final long newEpoch, final long newVoters, final long newLearners)
    {
        if (newEpoch <= epoch)
        {
            throw new IllegalArgumentException("membership epoch " + newEpoch + " is not newer than " + epoch);
        }
        final String problem = problem(newVoters, newLearners);
        if (null != problem)
        {
            throw new IllegalArgumentException("membership epoch " + newEpoch + ": " + problem);
        }
        store.saveMembership(newEpoch, newVoters, newLearners);
        epoch = newEpoch;
        voters = newVoters;
        learners = newLearners;
    }

    /** Mark each peer as a voter, a learner, or neither (removed: sent nothing) in the current epoch. */
    void apply(final PeerState[] peers)
    {
        for (final PeerState peer : peers)
        {
            peer.voting = isVoter(peer.id);
            peer.learner = isLearner(peer.id);
        }
    }

    /**
     * @return why member {@code id} may not run on a store that adopted a membership without it, or null if it may.
     */
    public static String removedReason(final int id, final ElectionStateStore store)
    {
        if (0 == store.configEpoch() || ((store.voters() | store.learners()) & (1L << id)) != 0)
        {
            return null;
        }
        return "member " + id + " was removed by membership epoch " + store.configEpoch() + " (voters " +
            ids(store.voters()) + "; learners " + ids(store.learners()) + "): the standby zone was promoted (tool " +
            "promote) while this member was away or cut off, so it may never lead, vote or commit again; its data " +
            "is kept as it was. To serve again, wipe its data directory and add it back to the new configuration";
    }

    /** @return "epoch 1 (voters 3,4,5; learners none)". */
    public String describe()
    {
        return "epoch " + epoch + " (voters " + ids(voters) + "; learners " + ids(learners) + ")";
    }

    /** @return the ids in a bit set, comma separated, or "none". */
    public static String ids(final long set)
    {
        if (0 == set)
        {
            return "none";
        }
        final StringBuilder sb = new StringBuilder();
        for (long rest = set; rest != 0; rest &= rest - 1)
        {
            sb.append(sb.length() == 0 ? "" : ",").append(Long.numberOfTrailingZeros(rest));
        }
        return sb.toString();
    }
}
