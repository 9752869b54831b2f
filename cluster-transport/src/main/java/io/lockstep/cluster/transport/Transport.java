package io.lockstep.cluster.transport;

import org.agrona.DirectBuffer;

/**
 * How a member exchanges whole messages with other members and with tools or drivers. Injected, so the consensus
 * agent never touches a socket: the real one is {@link TcpTransport}, the simulation's is in-memory. Endpoint ids
 * below {@link #CLIENT_ENDPOINT_BASE} are member ids; ids from it up are tool or driver connections.
 * <p>
 * Semantics a consensus agent may rely on, as with TCP: messages to one endpoint arrive in order, whole, at most
 * once; a broken connection loses whatever was in flight on it.
 */
public interface Transport extends AutoCloseable
{
    /** Endpoint ids from here up are tool or driver connections, not members. */
    int CLIENT_ENDPOINT_BASE = 1 << 20;

    /**
     * Receives messages.
     */
    @FunctionalInterface
    interface MessageHandler
    {
        /**
         * @param fromEndpoint the member id, or a client endpoint id.
         * @param buffer       holding the SBE message (header first); valid only during the call.
         * @param offset       index of the message.
         * @param length       length of the message.
         */
        void onMessage(int fromEndpoint, DirectBuffer buffer, int offset, int length);
    }

    /**
     * Deliver what has arrived, and make or repair connections.
     *
     * @param nowNs   the duty cycle's clock reading.
     * @param handler receives each message.
     * @return work done (messages delivered, connections changed).
     */
    int poll(long nowNs, MessageHandler handler);

    /**
     * Queue a message; it goes out on {@link #flush}.
     *
     * @return false if the endpoint is not connected or its queue is full (back pressure: try again later).
     */
    boolean send(int endpoint, DirectBuffer buffer, int offset, int length);

    /**
     * @return true while a connection to the endpoint is up (as far as this side knows).
     */
    boolean isConnected(int endpoint);

    /**
     * @return true if the endpoint may speak more than the client protocol: a member, or an operator tool that
     * proved the tool secret. Transports without authentication trust everyone.
     */
    default boolean isTrusted(final int endpoint)
    {
        return true;
    }

    /**
     * Write queued messages to the wire, as much as it takes without blocking.
     *
     * @return work done.
     */
    int flush(long nowNs);

    /**
     * Release connections.
     */
    void close();
}
