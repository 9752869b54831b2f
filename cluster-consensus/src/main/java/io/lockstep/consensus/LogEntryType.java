package io.lockstep.consensus;

import io.lockstep.consensus.log.NewLeadershipTermEncoder;

/**
 * Frame types of log entries written by the consensus module. The session and service layer's entries (sessions,
 * messages, timers, service messages, cluster actions) use their {@code log-entries.xml} template ids as frame types.
 */
public final class LogEntryType
{
    /**
     * First entry of every term (SBE {@code NewLeadershipTerm} of log-entries.xml: leader's clock, term, leader id).
     * Gives each term an entry to commit (Raft §8). Session and service entries use their log-entries template id as
     * their frame type.
     */
    public static final int NEW_LEADERSHIP_TERM = NewLeadershipTermEncoder.TEMPLATE_ID;
    /** An entry a driver appended through the leader (tool append): opaque bytes, nothing for services. */
    public static final int CLIENT_APPEND = 2;

    private LogEntryType()
    {
    }
}
