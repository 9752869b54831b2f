package io.lockstep.cluster.transport;

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
    /** Proved the cluster secret (members always; tools that hold it), or no secret is configured. */
    boolean trusted;
    Stage stage;
    byte[] localNonce;
    byte[] peerNonce;
    int claimedId;
    long handshakeDeadlineNs;

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
     * An accepted connection starts with small buffers, and gets full-size ones (megabytes) only once its
     * handshake is done: otherwise a flood of connections that never say Hello would cost the member gigabytes
     * and the pause of zeroing them on its own thread.
     */
    void markOpenForHandshake()
    {
        readBuffer = BufferUtil.allocateDirectAligned(HANDSHAKE_BUFFER_LENGTH, 64);
        readView = new UnsafeBuffer(readBuffer);
        writeBuffer = BufferUtil.allocateDirectAligned(HANDSHAKE_BUFFER_LENGTH, 64);
        writeView = new UnsafeBuffer(writeBuffer);
        open = true;
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
        final ByteBuffer out = writeBuffer;
        if (out.remaining() < Integer.BYTES + length)
        {
            return false;
        }
        final int at = out.position();
        writeView.putInt(at, length, ByteOrder.LITTLE_ENDIAN);
        writeView.putBytes(at + Integer.BYTES, buffer, offset, length);
        out.position(at + Integer.BYTES + length);
        return true;
    }

    /** A full-size write buffer, keeping what is queued (at registration: replies may be large). */
    void growWriteBuffer()
    {
        if (writeBuffer.capacity() < writeLength)
        {
            final ByteBuffer old = writeBuffer;
            writeBuffer = BufferUtil.allocateDirectAligned(writeLength, 64);
            writeView = new UnsafeBuffer(writeBuffer);
            old.flip();
            writeBuffer.put(old);
        }
    }

    /** A full-size read buffer, keeping unread bytes (after a read pass, never during one). */
    void growReadBuffer()
    {
        if (readBuffer.capacity() < readLength)
        {
            final ByteBuffer old = readBuffer;
            readBuffer = BufferUtil.allocateDirectAligned(readLength, 64);
            readView = new UnsafeBuffer(readBuffer);
            old.flip();
            readBuffer.put(old);
        }
    }
}
