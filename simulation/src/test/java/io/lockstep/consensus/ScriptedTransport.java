package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A transport for driving one member by hand: messages queued with {@link #deliver} reach the member at its next
 * poll, in order, and everything it sends is kept, with where it went, for the test to read.
 */
final class ScriptedTransport implements Transport
{
    /** One message the member sent. */
    record Sent(int endpoint, byte[] bytes)
    {
    }

    private final ArrayDeque<byte[]> inbound = new ArrayDeque<>();
    private final ArrayDeque<Integer> inboundFrom = new ArrayDeque<>();
    final List<Sent> sent = new ArrayList<>();
    /** Endpoints whose connection is down ({@link #isConnected}). */
    final Set<Integer> down = new HashSet<>();

    /** Queue a whole message (header first) from an endpoint, for the member's next poll. */
    void deliver(final int from, final byte[] message)
    {
        inboundFrom.add(from);
        inbound.add(message);
    }

    public int poll(final long nowNs, final MessageHandler handler)
    {
        int delivered = 0;
        while (!inbound.isEmpty())
        {
            final byte[] message = inbound.poll();
            handler.onMessage(inboundFrom.poll(), new UnsafeBuffer(message), 0, message.length);
            delivered++;
        }
        return delivered;
    }

    public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        sent.add(new Sent(endpoint, bytes));
        return true;
    }

    public boolean isConnected(final int endpoint)
    {
        return !down.contains(endpoint);
    }

    public int flush(final long nowNs)
    {
        return 0;
    }

    public void close()
    {
    }
}
