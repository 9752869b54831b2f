package io.lockstep.cluster.transport;

import java.util.concurrent.TimeUnit;

/**
 * What a member's transport lets connections that are not members hold, so that no client, and no one posing as
 * one, can crowd out members or make the member hold unbounded memory. Members never count against these: a member's
 * connection has its own slot, by member id.
 * <ul>
 *   <li>At most {@code maxHandshakes} accepted connections may be in their handshake at once (connected, Hello not
 *       yet done). One more evicts the oldest of them: a flood of silent connects delays a reconnecting member by a
 *       retry at most, and never locks it out.</li>
 *   <li>At most {@code maxClients} client and tool connections may have finished their Hello. One more is refused
 *       with a reason, until one closes.</li>
 *   <li>A client or tool connection silent for {@code clientIdleTimeoutNs} is closed. A genuine client sends
 *       keepalives well inside that, and reconnects if it was closed.</li>
 *   <li>A client's buffers start at {@value TcpConnection#HANDSHAKE_BUFFER_LENGTH} bytes and double as the bytes it
 *       sends (or the replies it does not read) fill them, to the transport's bound on one message; a member's are
 *       full size from the start. What all clients' buffers hold beyond their first 8 KiB is bounded by
 *       {@code clientBufferBytes}: a connection that would take more is closed.</li>
 * </ul>
 *
 * @param maxClients          client and tool connections past their Hello.
 * @param maxHandshakes       accepted connections still in their handshake.
 * @param clientIdleTimeoutNs how long a client or tool connection may stay silent.
 * @param clientBufferBytes   what all client and tool connections' buffers may hold beyond their first 8 KiB.
 */
public record ConnectionLimits(int maxClients, int maxHandshakes, long clientIdleTimeoutNs, long clientBufferBytes)
{
    /** 256 clients, 64 handshakes, 30 s of silence, 64 MiB of grown client buffers. */
    public static final ConnectionLimits DEFAULTS =
        new ConnectionLimits(256, 64, TimeUnit.SECONDS.toNanos(30), 64L * 1024 * 1024);

    /**
     * @throws IllegalArgumentException naming the bound that is out of range.
     */
    public ConnectionLimits
    {
        if (maxClients < 1 || maxClients > 65_536)
        {
            throw new IllegalArgumentException("client connections must be 1 to 65536, not " + maxClients);
        }
        if (maxHandshakes < 1 || maxHandshakes > 4096)
        {
            throw new IllegalArgumentException("connections in handshake must be 1 to 4096, not " + maxHandshakes);
        }
        if (clientBufferBytes < 1024 * 1024)
        {
            throw new IllegalArgumentException("client buffers must be allowed at least 1 MiB, not " +
                clientBufferBytes);
        }
        if (clientIdleTimeoutNs < TimeUnit.SECONDS.toNanos(1))
        {
            throw new IllegalArgumentException("the client idle timeout must be at least 1 s, not " +
                TimeUnit.NANOSECONDS.toMillis(clientIdleTimeoutNs) + " ms");
        }
    }
}
