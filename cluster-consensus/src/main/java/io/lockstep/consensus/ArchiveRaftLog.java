package io.lockstep.consensus;

import io.lockstep.archive.ArchiveLog;
import io.lockstep.archive.BlockHandler;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.archive.LogReader;
import org.agrona.DirectBuffer;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The consensus agent's log over archive-log: one writer, and one reader that the leader moves to wherever a
 * follower needs bytes from.
 */
public final class ArchiveRaftLog implements RaftLog
{
    private final ArchiveLog log;
    private final LogReader reader;

    /**
     * @param log an open log; this takes ownership and closes it.
     */
    public ArchiveRaftLog(final ArchiveLog log)
    {
        this.log = log;
        this.reader = log.newReader(log.startPosition());
    }

    public long startPosition()
    {
        return log.startPosition();
    }

    public long pendingPosition()
    {
        return log.pendingPosition();
    }

    public long appendedPosition()
    {
        return log.appendedPosition();
    }

    public long durablePosition()
    {
        return log.durablePosition();
    }

    public long append(final long term, final int frameType, final DirectBuffer buffer, final int offset, final int length)
    {
        return log.append(term, frameType, buffer, offset, length);
    }

    public long appendFrames(final DirectBuffer buffer, final int offset, final int length)
    {
        return log.appendFrames(buffer, offset, length);
    }

    public long flush()
    {
        return log.flush();
    }

    public void truncate(final long position)
    {
        log.truncate(position);
    }

    public int readBlock(final long position, final long limitPosition, final int maxBytes, final BlockHandler handler)
    {
        reader.seek(position);
        return reader.readBlock(handler, limitPosition, maxBytes);
    }

    public void scan(final FrameVisitor visitor)
    {
        try (LogReader scanner = log.newReader(log.startPosition()))
        {
            final BlockHandler blockHandler = (buffer, offset, length, startPosition, endPosition) ->
            {
                long position = startPosition;
                for (int o = offset; o < offset + length; )
                {
                    final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
                    final int type = buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
                    visitor.onFrame(position, buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN), type);
                    final boolean padding = PADDING_FRAME_TYPE == type;
                    position += padding ? frameLength : FrameDescriptor.alignedLength(frameLength);
                    o += padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
                }
            };
            while (scanner.readBlock(blockHandler, Long.MAX_VALUE, 1 << 20) > 0)
            {
            }
        }
    }

    public void close()
    {
        reader.close();
        log.close();
    }
}
