package io.lockstep.consensus;

/**
 * Frame types of log entries written by the consensus module. Services' entry types (sessions, messages, timers)
 * arrive with the service work.
 */
public final class LogEntryType
{
    /** First entry of every term: leader id, term, leader's clock. Gives each term an entry to commit (Raft §8). */
    public static final int NEW_LEADERSHIP_TERM = 1;
    /** An entry a driver appended through the leader. */
    public static final int CLIENT_APPEND = 2;

    private LogEntryType()
    {
    }
}
