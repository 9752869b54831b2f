package io.lockstep.cluster.transport;

import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One connection of a {@link TcpTransport}: its socket, its read and write buffers, and where its handshake is.
 * Owned and touched by the transport's polling thread only.
 */
final class TcpConnection
{
    /** Room for a handshake and a client's first request pipelined behind it. */
    static final int HANDSHAKE_BUFFER_LENGTH = 8 * 1024;
    /** Longest handshake message accepted (the longest today, HelloReply, is 61 bytes with its header). */
    static final int MAX_HANDSHAKE_MESSAGE_LENGTH = 256;

    /** Where a connection's handshake is. */
    enum Stage
    {
        /** Accepted: the peer's Hello is next. */
        AWAIT_HELLO,
        /** Accepted an authenticating Hello and sent the reply: the peer's proof is next. */
        AWAIT_PROOF,
        /** Connected and sent an authenticating Hello: the member's reply is next. */
        AWAIT_REPLY,
        READY
    }

    final SocketChannel channel;
    /** The member this side dialled, or -1 for an accepted connection. */
    final int connectTo;
    private final int readLength;
    private final int writeLength;
    ByteBuffer readBuffer;
    UnsafeBuffer readView;
    ByteBuffer writeBuffer;
    UnsafeBuffer writeView;
    SelectionKey key;
    int endpoint = -1;
    /** Socket up and buffers allocated: handshake messages may flow. */
    boolean open;
    /** Handshake done: the owner may send and receives messages. */
    boolean connected;
    /** A member (which proved the member secret), a tool that proved the tool secret, or no secret is configured. */
    boolean trusted;
    Stage stage;
    byte[] localNonce;
    byte[] peerNonce;
    int claimedId;
    /** Where an accepted connection's small buffers came from, and go back to when they are outgrown or closed. */
    private HandshakeBuffers pool;
    /** Claimed a member id, asked to be trusted as a tool, or dialled a member: its refusals are identity problems. */
    boolean claimedIdentity;
    /** Proved the tool secret: counted against the tools' own slots, not the clients'. */
    boolean tool;
    /** A client's or tool's: what its grown buffers are reserved from; null for a member's connection. */
    BufferBudget budget;
    /** Bytes this connection's buffers reserved from the budget. */
    private long budgeted;
    /** The secret the accepted peer must prove: the member secret for a member, the tool secret for a tool. */
    ClusterSecret handshakeSecret;
    long handshakeDeadlineNs;
    /** Accepted, and its handshake not done: it holds one of the transport's bounded handshake slots. */
    boolean holdsHandshakeSlot;
    /** When a client or tool connection last sent a whole message, or finished its Hello. */
    long lastHeardNs;
    /** When this side last wrote to the connection: a client sends a heartbeat where it has been silent. */
    long lastSentNs;
    /** The TLS layer, or null for a link in the clear. */
    TlsLink tls;
    /** An accepted connection whose first bytes said whether it is TLS: dialled ones are decided at connect. */
    boolean tlsDecided;
    /** Its TLS handshake waits for a later poll's share of handshake work. */
    boolean tlsDeferred;
    /** A whole message came in on it: the peer took the connection, not only the socket. */
    boolean heardFrom;
    /** In the transport's queue of TLS connections to decrypt at the next poll. */
    boolean readQueued;

    /**
     * @param readLength  full-size read buffer: room for two of the longest messages.
     * @param writeLength full-size write buffer.
     */
    TcpConnection(final SocketChannel channel, final int connectTo, final int readLength, final int writeLength)
    {
        this.channel = channel;
        this.connectTo = connectTo;
        this.readLength = readLength;
        this.writeLength = writeLength;
    }

    /**
     * An accepted connection starts with small buffers, and gets larger ones only as a member, or as its messages
     * need them: otherwise a flood of connections would cost the member gigabytes and the pause of zeroing them on
     * its own thread.
     */
    void markOpenForHandshake(final HandshakeBuffers pool)
    {
        this.pool = pool;
        readBuffer = pool.take();
        readView = new UnsafeBuffer(readBuffer);
        writeBuffer = pool.take();
        writeView = new UnsafeBuffer(writeBuffer);
        open = true;
    }

    /**
     * The connection is closed: its small buffers go back to the pool for the next one.
     */
    void releaseBuffers(final HandshakeBuffers pool)
    {
        pool.give(readBuffer);
        pool.give(writeBuffer);
        readBuffer = null;
        writeBuffer = null;
    }

    /**
     * A dialled connection, once its socket is up: full-size buffers at once. They are allocated once connected,
     * not per attempt, so that retrying a dead peer every backoff interval stays cheap.
     */
    void markOpen()
    {
        if (null == readBuffer)
        {
            readBuffer = BufferUtil.allocateDirectAligned(readLength, 64);
            readView = new UnsafeBuffer(readBuffer);
            writeBuffer = BufferUtil.allocateDirectAligned(writeLength, 64);
            writeView = new UnsafeBuffer(writeBuffer);
        }
        open = true;
    }

    /**
     * Queue one message (an int32 length, little-endian, then the bytes) for the next flush.
     *
     * @return false when the write buffer lacks room: back pressure, the caller retries later.
     */
    boolean enqueue(final DirectBuffer buffer, final int offset, final int length)
    {
        if (writeBuffer.remaining() < Integer.BYTES + length && !growWriteBuffer(Integer.BYTES + length))
        {
            return false;
        }
        final ByteBuffer out = writeBuffer;
        final int at = out.position();
        writeView.putInt(at, length, ByteOrder.LITTLE_ENDIAN);
        writeView.putBytes(at + Integer.BYTES, buffer, offset, length);
        out.position(at + Integer.BYTES + length);
        return true;
    }

    /** A full-size write buffer, keeping what is queued (a member's, at registration). */
    void growWriteBufferToFull()
    {
        if (writeBuffer.capacity() < writeLength)
        {
            replaceWriteBuffer(writeLength);
        }
    }

    /** A full-size read buffer, keeping unread bytes (a member's; after a read pass, never during one). */
    void growReadBufferToFull()
    {
        if (readBuffer.capacity() < readLength)
        {
            replaceReadBuffer(readLength);
        }
    }

    /**
     * A client's read buffer is full and a frame is still coming: double it, to the full size at most. It grows only
     * as bytes arrive, so a length prefix alone makes the member hold nothing.
     *
     * @return false if the buffer cannot grow (full size already, or the budget refuses): the frame cannot be read.
     */
    boolean growReadBufferForMore()
    {
        final int capacity = readBuffer.capacity();
        final int grown = Math.min(readLength, 2 * capacity);
        return grown > capacity && reserve(grown - capacity) && replaceReadBuffer(grown);
    }

    /** Room for this many more bytes, doubling up to the full size: false if not to be had. */
    private boolean growWriteBuffer(final int needed)
    {
        final int capacity = writeBuffer.capacity();
        final int grown = Math.min(writeLength, BitUtil.findNextPositivePowerOfTwo(
            Math.max(2 * capacity, writeBuffer.position() + needed)));
        return grown > capacity && reserve(grown - capacity) && replaceWriteBuffer(grown) &&
            writeBuffer.remaining() >= needed;
    }

    /** Members' connections are not budgeted: their buffers are full size from the start. */
    private boolean reserve(final int bytes)
    {
        if (null == budget)
        {
            return true;
        }
        if (budget.reserve(bytes))
        {
            budgeted += bytes;
            return true;
        }
        return false;
    }

    /** Give back what this connection's buffers took from the budget (as it closes). */
    void releaseBudget()
    {
        if (null != budget)
        {
            budget.release(budgeted);
            budgeted = 0;
        }
    }

    private boolean replaceWriteBuffer(final int capacity)
    {
        final ByteBuffer larger = copyInto(writeBuffer, capacity);
        if (null == larger)
        {
            return false;
        }
        giveBack(writeBuffer);
        writeBuffer = larger;
        writeView = new UnsafeBuffer(larger);
        return true;
    }

    private boolean replaceReadBuffer(final int capacity)
    {
        final ByteBuffer larger = copyInto(readBuffer, capacity);
        if (null == larger)
        {
            return false;
        }
        giveBack(readBuffer);
        readBuffer = larger;
        readView = new UnsafeBuffer(larger);
        return true;
    }

    private void giveBack(final ByteBuffer outgrown)
    {
        if (null != pool)
        {
            pool.give(outgrown);
        }
    }

    /** A larger buffer holding what the old one held (its bytes up to its position), or null if none can be had. */
    private static ByteBuffer copyInto(final ByteBuffer old, final int capacity)
    {
        final ByteBuffer larger = allocate(capacity);
        if (null != larger)
        {
            old.flip();
            larger.put(old);
        }
        return larger;
    }

    /**
     * @return a direct buffer, or null if the JVM's direct memory is exhausted: that fails this connection's growth,
     * never the member.
     */
    private static ByteBuffer allocate(final int capacity)
    {
        try
        {
            return BufferUtil.allocateDirectAligned(capacity, 64);
        }
        catch (final OutOfMemoryError ex)
        {
            return null;
        }
    }
}
