package io.lockstep.consensus;

final class MemoryElectionState implements ElectionStateStore
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
