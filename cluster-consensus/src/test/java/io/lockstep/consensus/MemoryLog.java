package io.lockstep.consensus;

import io.lockstep.archive.BlockHandler;
import io.lockstep.archive.FrameDescriptor;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The smallest RaftLog for unit tests of one member: frames in memory, every flush durable.
 */
final class MemoryLog implements RaftLog
{
    private final ExpandableArrayBuffer data = new ExpandableArrayBuffer(4096);
    private long pending;
    private long appended;

    void appendEntry(final long term, final int length)
    {
        append(term, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[length]), 0, length);
        flush();
    }

    public long startPosition()
    {
        return 0;
    }

    public long pendingPosition()
    {
        return pending;
    }

    public long appendedPosition()
    {
        return appended;
    }

    public long durablePosition()
    {
        return appended;
    }

    public long append(final long term, final int frameType, final DirectBuffer buffer, final int offset, final int length)
    {
        final int at = (int)pending;
        final int aligned = FrameDescriptor.alignedFrameLength(length);
        data.setMemory(at, aligned, (byte)0);
        data.putInt(at, HEADER_LENGTH + length, LITTLE_ENDIAN);
        data.putLong(at + FrameDescriptor.TERM_OFFSET, term, LITTLE_ENDIAN);
        data.putLong(at + FrameDescriptor.POSITION_OFFSET, pending, LITTLE_ENDIAN);
        data.putInt(at + FrameDescriptor.TYPE_OFFSET, frameType, LITTLE_ENDIAN);
        data.putBytes(at + HEADER_LENGTH, buffer, offset, length);
        pending += aligned;
        return pending;
    }

    public long appendFrames(final DirectBuffer buffer, final int offset, final int length)
    {
        data.putBytes((int)pending, buffer, offset, length);
        pending += length;
        return pending;
    }

    public long flush()
    {
        appended = pending;
        return appended;
    }

    public void truncate(final long position)
    {
        pending = position;
        appended = position;
    }

    public int readBlock(final long position, final long limitPosition, final int maxBytes, final BlockHandler handler)
    {
        final long end = Math.min(limitPosition, appended);
        if (end <= position)
        {
            return 0;
        }
        handler.onBlock(data, (int)position, (int)(end - position), position, end);
        return (int)(end - position);
    }

    public void scan(final FrameVisitor visitor)
    {
        long p = 0;
        while (p < appended)
        {
            visitor.onFrame(p, data.getLong((int)p + FrameDescriptor.TERM_OFFSET, LITTLE_ENDIAN),
                data.getInt((int)p + FrameDescriptor.TYPE_OFFSET, LITTLE_ENDIAN));
            p += FrameDescriptor.alignedLength(data.getInt((int)p, LITTLE_ENDIAN));
        }
    }

    public void close()
    {
    }
}
