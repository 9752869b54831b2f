package io.lockstep.cluster;

import org.agrona.DirectBuffer;

/**
 * A connected client, as the service sees it. Egress offered here is produced while applying the log, so every
 * member produces the same egress: the leader sends it; followers keep it in a bounded per-session buffer, so that
 * after a failover the new leader can resend what the client had not received.
 */
public interface ClientSession
{
    /** The session is closed: the message goes nowhere. */
    long CLOSED = -4;
    /** The message is longer than the session's bound. */
    long TOO_LONG = -5;

    /**
     * @return the session id, unique for the life of the cluster.
     */
    long id();

    /**
     * @return who the client authenticated as, from the cluster's {@code ClientAuthenticator} when the session
     * opened (replicated: every member sees the same); {@code ""} for a cluster that accepts all clients. A resume
     * after a failover must authenticate as the same principal.
     */
    String principal();

    /**
     * Send a message to this session's client. Never back-pressured, never throws: the session's egress buffer keeps
     * the most recent messages, dropping the oldest when full, and a client that had not received a dropped message
     * is told so explicitly (an egress gap), never left to guess. Why not back pressure: whether the buffer is full
     * would depend on how far each member's copy of the client has acknowledged, which members do not agree on, so
     * an answer of "full" could differ between replicas and their states would diverge.
     *
     * @param buffer holding the message.
     * @param offset index of the message.
     * @param length length of the message.
     * @return the session's egress sequence of the message, or {@link #CLOSED} or {@link #TOO_LONG}.
     */
    long offer(DirectBuffer buffer, int offset, int length);

    /**
     * @return true once the session has been closed.
     */
    boolean isClosed();
}
