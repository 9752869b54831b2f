package io.lockstep.cluster.transport;

import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers of {@link TcpConnection#HANDSHAKE_BUFFER_LENGTH} bytes, kept when their connection closes and
 * handed to the next one: a stream of short-lived connections (a scan, a flood, a fuzzer) then allocates nothing,
 * where each would otherwise leave two direct buffers for the garbage collector to find, and the member's resident
 * memory grows by them until it does. Bounded; owned by the transport's thread.
 */
final class HandshakeBuffers
{
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();
    private final int capacity;

    /**
     * @param capacity buffers kept at most; more are left to the garbage collector.
     */
    HandshakeBuffers(final int capacity)
    {
        this.capacity = capacity;
    }

    /**
     * @return a cleared buffer of the handshake length.
     */
    ByteBuffer take()
    {
        final ByteBuffer buffer = free.pollLast();
        return null != buffer ? buffer.clear() :
            BufferUtil.allocateDirectAligned(TcpConnection.HANDSHAKE_BUFFER_LENGTH, 64);
    }

    /**
     * @param buffer a buffer no connection uses any more; kept if it is of the handshake length and there is room.
     */
    void give(final ByteBuffer buffer)
    {
        if (null != buffer && buffer.capacity() == TcpConnection.HANDSHAKE_BUFFER_LENGTH && free.size() < capacity)
        {
            free.addLast(buffer);
        }
    }
}
