package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.InstallSnapshotEncoder;

/**
 * Who votes and who only learns. Two ways change it:
 * <ul>
 *     <li>within an epoch, {@code MembershipChange} log entries (Raft's single-server changes: one voter added or
 *     removed at a time, one change in flight). A member uses the newest configuration in its log, committed or
 *     not (Raft §6); a change cut from the log with a conflicting suffix is undone; a committed one becomes the
 *     durable base ({@link ElectionStateStore}), which is what a member whose log is purged or replaced by a
 *     snapshot still knows. Configurations are ordered by (epoch, version);</li>
 *     <li>a new epoch, by promotion (below).</li>
 * </ul>
 * Epoch 0 is what the configuration file seeds (members listed
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
    /** Bound on changes held in the log above the committed base (one is in flight at a time in practice). */
    static final int MAX_LOG_CHANGES = 1024;
    private static final int TERM_EPOCH_SHIFT = 32;

    private final ElectionStateStore store;
    private final long configured;
    private PeerState[] peers = new PeerState[0];

    private long baseEpoch;
    private long baseVersion;
    private long baseVoters;
    private long baseLearners;

    private final long[] changePosition = new long[MAX_LOG_CHANGES];
    private final long[] changeEpoch = new long[MAX_LOG_CHANGES];
    private final long[] changeVersion = new long[MAX_LOG_CHANGES];
    private final long[] changeVoters = new long[MAX_LOG_CHANGES];
    private final long[] changeLearners = new long[MAX_LOG_CHANGES];
    private int changes;

    private long epoch;
    private long version;
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
        if (store.configEpoch() > 0 || store.configVersion() > 0)
        {
            final String problem = problem(store.voters(), store.learners());
            if (null != problem)
            {
                throw new IllegalStateException("the stored membership (epoch " + store.configEpoch() + ", version " +
                    store.configVersion() + ") does not fit the configuration file: " + problem);
            }
            baseEpoch = store.configEpoch();
            baseVersion = store.configVersion();
            baseVoters = store.voters();
            baseLearners = store.learners();
        }
        else
        {
            baseVoters = seedVoters;
            baseLearners = configured & ~seedVoters;
        }
        recompute();
    }

    /** The members whose voting and learning flags follow the configuration. */
    void peers(final PeerState[] peers)
    {
        this.peers = peers;
        apply(peers);
    }

    public long epoch()
    {
        return epoch;
    }

    public long version()
    {
        return version;
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

    /** @return false once the member has been removed: it takes no part in the configuration. */
    public boolean isMember(final int id)
    {
        return isVoter(id) || isLearner(id);
    }

    /** @return true if the member votes in the committed configuration (changes in flight aside). */
    boolean isCommittedVoter(final int id)
    {
        return (baseVoters & (1L << id)) != 0;
    }

    /** Write the committed configuration into a snapshot chunk: a member installing it may have no log of it. */
    void committedTo(final InstallSnapshotEncoder encoder)
    {
        encoder.configVersion(baseVersion).voters(baseVoters).learners(baseLearners);
    }

    /** @return true while a change is in the log and not yet committed: no other may start. */
    boolean changeInFlight()
    {
        return changes > 0;
    }

    /** @return true if the member has an address in the configuration file. */
    boolean isConfigured(final int id)
    {
        return id >= 0 && id < ConsensusConfig.MAX_MEMBERS && (configured & (1L << id)) != 0;
    }

    /**
     * @return the first term of an epoch: terms of epoch e are e << 32 and up, so that no term is led in two
     * configurations (a lost zone's last terms are unknown to the standbys that replace it).
     */
    static long firstTermOf(final long epoch)
    {
        return epoch << TERM_EPOCH_SHIFT;
    }

    /** @return the membership epoch a term belongs to (see {@link #firstTermOf}). */
    public static long epochOfTerm(final long term)
    {
        return term >>> TERM_EPOCH_SHIFT;
    }

    /**
     * @return true if a leader of {@code leaderTerm} is of a newer epoch than the entry at this member's commit
     * position: the one case where its history may part from this member's below the commit (an asynchronous
     * promotion lost what the old configuration committed).
     */
    static boolean isNewerEpoch(final long leaderTerm, final long committedTerm)
    {
        return epochOfTerm(leaderTerm) > epochOfTerm(committedTerm);
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
     * Adopt a newer epoch (a promotion, or a notice from a member on it) as the committed base: durable before this
     * returns.
     *
     * @throws IllegalArgumentException if the epoch is not newer or the sets are not a configuration.
     */
    void adopt(final long newEpoch, final long newVersion, final long newVoters, final long newLearners)
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
        setBase(newEpoch, newVersion, newVoters, newLearners);
        changes = 0;
        recompute();
    }

    /**
     * The leader's committed configuration, sent with a snapshot: this member's log below the snapshot is gone, and
     * with it any change it held there.
     */
    void onSnapshotConfiguration(
        final long leaderEpoch, final long leaderVersion, final long leaderVoters, final long leaderLearners)
    {
        if (isNewer(leaderEpoch, leaderVersion, baseEpoch, baseVersion) && null == problem(leaderVoters,
            leaderLearners))
        {
            setBase(leaderEpoch, leaderVersion, leaderVoters, leaderLearners);
            recompute();
        }
    }

    /**
     * A {@code MembershipChange} entry now in this member's log, starting at {@code position} (appended by this
     * leader, taken from one, or found when the log is scanned at start): from here on it is the configuration.
     */
    void onLogChange(
        final long position, final long entryEpoch, final long entryVersion, final long entryVoters,
        final long entryLearners)
    {
        if (!isNewer(entryEpoch, entryVersion, baseEpoch, baseVersion))
        {
            return;
        }
        if (changes == MAX_LOG_CHANGES)
        {
            throw new IllegalStateException("more than " + MAX_LOG_CHANGES + " uncommitted membership changes in " +
                "the log at " + position);
        }
        changePosition[changes] = position;
        changeEpoch[changes] = entryEpoch;
        changeVersion[changes] = entryVersion;
        changeVoters[changes] = entryVoters;
        changeLearners[changes] = entryLearners;
        changes++;
        recompute();
    }

    /** The log was cut at {@code position}: changes from there on are undone. */
    void onTruncate(final long position)
    {
        int kept = 0;
        while (kept < changes && changePosition[kept] < position)
        {
            kept++;
        }
        if (kept != changes)
        {
            changes = kept;
            recompute();
        }
    }

    /** Changes committed by now become the durable base. */
    void onCommit(final long commitPosition)
    {
        if (0 == changes || changePosition[0] >= commitPosition)
        {
            return;
        }
        int folded = 0;
        while (folded < changes && changePosition[folded] < commitPosition)
        {
            folded++;
        }
        final int last = folded - 1;
        if (isNewer(changeEpoch[last], changeVersion[last], baseEpoch, baseVersion))
        {
            setBase(changeEpoch[last], changeVersion[last], changeVoters[last], changeLearners[last]);
        }
        System.arraycopy(changePosition, folded, changePosition, 0, changes - folded);
        System.arraycopy(changeEpoch, folded, changeEpoch, 0, changes - folded);
        System.arraycopy(changeVersion, folded, changeVersion, 0, changes - folded);
        System.arraycopy(changeVoters, folded, changeVoters, 0, changes - folded);
        System.arraycopy(changeLearners, folded, changeLearners, 0, changes - folded);
        changes -= folded;
    }

    private void setBase(final long newEpoch, final long newVersion, final long newVoters, final long newLearners)
    {
        store.saveMembership(newEpoch, newVersion, newVoters, newLearners);
        baseEpoch = newEpoch;
        baseVersion = newVersion;
        baseVoters = newVoters;
        baseLearners = newLearners;
    }

    private void recompute()
    {
        epoch = baseEpoch;
        version = baseVersion;
        voters = baseVoters;
        learners = baseLearners;
        for (int i = 0; i < changes; i++)
        {
            if (isNewer(changeEpoch[i], changeVersion[i], epoch, version))
            {
                epoch = changeEpoch[i];
                version = changeVersion[i];
                voters = changeVoters[i];
                learners = changeLearners[i];
            }
        }
        apply(peers);
    }

    private static boolean isNewer(final long epochA, final long versionA, final long epochB, final long versionB)
    {
        return epochA > epochB || (epochA == epochB && versionA > versionB);
    }

    /** Mark each peer as a voter, a learner, or neither (removed: sent nothing) in the current configuration. */
    void apply(final PeerState[] peers)
    {
        for (final PeerState peer : peers)
        {
            peer.voting = isVoter(peer.id);
            peer.learner = isLearner(peer.id);
        }
    }

    /**
     * @return why member {@code id} may not run on a store whose committed membership is without it, or null if it
     * may.
     */
    public static String removedReason(final int id, final ElectionStateStore store)
    {
        if ((0 == store.configEpoch() && 0 == store.configVersion()) ||
            ((store.voters() | store.learners()) & (1L << id)) != 0)
        {
            return null;
        }
        return "member " + id + " was removed by membership epoch " + store.configEpoch() + " version " +
            store.configVersion() + " (voters " + ids(store.voters()) + "; learners " + ids(store.learners()) +
            "): by tool promote (the standby zone replaced this member's) or tool remove-member, so it may never " +
            "lead, vote or commit again; its data is kept as it was. To serve again, wipe its data directory and " +
            "add it back (tool add-member)";
    }

    /** @return "epoch 1 version 2 (voters 3,4,5; learners none)". */
    public String describe()
    {
        return "epoch " + epoch + " version " + version + " (voters " + ids(voters) + "; learners " + ids(learners) +
            ")";
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
