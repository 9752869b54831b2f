package io.lockstep.consensus;

/**
 * Term, vote and membership in memory, kept across simulated restarts: save returns only once "durable", as the
 * real store's does.
 */
public final class MemoryElectionState implements ElectionStateStore
{
    private long term;
    private int votedFor = NO_VOTE;
    private long configEpoch;
    private long configVersion;
    private long voters;
    private long learners;
    private ClusterIdentity identity = ClusterIdentity.NONE;

    public long term()
    {
        return term;
    }

    public int votedFor()
    {
        return votedFor;
    }

    public void save(final long term, final int votedFor)
    {
        this.term = term;
        this.votedFor = votedFor;
    }

    public long configEpoch()
    {
        return configEpoch;
    }

    public long configVersion()
    {
        return configVersion;
    }

    public long voters()
    {
        return voters;
    }

    public long learners()
    {
        return learners;
    }

    public void saveMembership(final long configEpoch, final long configVersion, final long voters,
        final long learners)
    {
        this.configEpoch = configEpoch;
        this.configVersion = configVersion;
        this.voters = voters;
        this.learners = learners;
    }

    public ClusterIdentity identity()
    {
        return identity;
    }

    public void saveIdentity(final ClusterIdentity identity)
    {
        this.identity = identity;
    }
}
