package io.lockstep.consensus.sim;

import io.lockstep.consensus.ElectionStateStore;

/**
 * Term and vote kept across simulated crashes: save returns only once durable, as the real store's does.
 */
final class SimElectionState implements ElectionStateStore
{
    private long term;
    private int votedFor = NO_VOTE;

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
}
