package io.lockstep.cluster;

import org.agrona.DirectBuffer;

/**
 * A connected client, as the service sees it. Egress offered here is produced while applying the log, so every
 * member produces the same egress: the leader sends it; followers keep it in a bounded per-session buffer, so that
 * after a failover the new leader can resend what the client had not received.
 */
public interface ClientSession
{
    /** The egress buffer is full: try again later. */
    long BACK_PRESSURED = -2;
    /** The session is closed: the message goes nowhere. */
    long CLOSED = -4;
    /** The message is longer than the session's bound. */
    long TOO_LONG = -5;

    /**
     * @return the session id, unique for the life of the cluster.
     */
    long id();

    /**
     * Send a message to this session's client. Flow control never throws: a negative result is back pressure or
     * a closed session.
     *
     * @param buffer holding the message.
     * @param offset index of the message.
     * @param length length of the message.
     * @return the session's egress position after the message, or {@link #BACK_PRESSURED}, {@link #CLOSED} or
     * {@link #TOO_LONG}.
     */
    long offer(DirectBuffer buffer, int offset, int length);

    /**
     * @return true once the session has been closed.
     */
    boolean isClosed();
}
