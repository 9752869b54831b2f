package io.lockstep.consensus;

/**
 * The current term and the vote cast in it: durable before any message that depends on them is sent (Raft §5.2).
 */
public interface ElectionStateStore
{
    /** No vote cast in the current term. */
    int NO_VOTE = -1;

    long term();

    int votedFor();

    /**
     * Make the pair durable; returns only once it is.
     */
    void save(long term, int votedFor);
}
