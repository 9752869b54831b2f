package io.lockstep.consensus;

/**
 * Term and vote in memory, kept across simulated restarts: save returns only once "durable", as the real store's does.
 */
public final class MemoryElectionState implements ElectionStateStore
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
