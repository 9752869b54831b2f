package io.lockstep.archive;

import org.agrona.concurrent.UnsafeBuffer;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_FRAME;
import static io.lockstep.archive.ArchiveException.Reason.PURGED;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Reads frames from a position onward, tailing the log as it grows. Segments are memory mapped, so frames are handed
 * out in place, without copying or allocating. Every frame is checked (checksum, length, position) before it is
 * handed out: a damaged frame is an {@code ArchiveException} naming the file and position, and the reader goes no
 * further. Used by one thread; any number of readers may run beside the writer.
 */
public final class LogReader implements AutoCloseable
{
    private final ArchiveLog log;
    private final int segmentLength;
    private final FrameValidator validator;
    private MappedSegment segment;
    /** The segment this reader was in before {@link #segment}, still mapped: see {@link #mapSegment}. */
    private MappedSegment previous;
    /** {@link ArchiveLog#segmentDeletions()} when this reader's mappings were last checked. */
    private int deletionsSeen;
    private long position;
    private boolean stopAtDamage;
    private long damagedAt = -1;
    private String damage;

    LogReader(final ArchiveLog log, final long position)
    {
        this.log = log;
        this.segmentLength = log.segmentLength();
        this.validator = new FrameValidator(log.maxFrameLength());
        this.position = position;
        this.deletionsSeen = log.segmentDeletions();
        SegmentUnmapper.start();
    }

    /**
     * From now on {@link #readBlock} hands out the whole frames before a damaged one and stops there, instead of
     * throwing: the reader's owner can then have the frame fetched again and carry on ({@link #damagedAt()}).
     *
     * @return this.
     */
    public LogReader stopAtDamage()
    {
        stopAtDamage = true;
        return this;
    }

    /** @return where the last {@link #readBlock} found a damaged frame (see {@link #stopAtDamage}), or -1. */
    public long damagedAt()
    {
        return damagedAt;
    }

    /** @return what was wrong with the frame at {@link #damagedAt()}, naming its file, or null. */
    public String damage()
    {
        return damage;
    }

    /**
     * @return position of the next frame this reader will read.
     */
    public long position()
    {
        return position;
    }

    /**
     * Hand frames to a handler, up to a limit.
     *
     * @param handler       receives each frame.
     * @param limitPosition read no frame that ends beyond this (for example the commit position).
     * @param maxFrames     bound on frames handed out in this call.
     * @return the number of frames handed out.
     */
    public int poll(final FrameHandler handler, final long limitPosition, final int maxFrames)
    {
        final long bound = Math.min(limitPosition, log.publishedPosition());
        int count = 0;
        while (count < maxFrames && position < bound)
        {
            final UnsafeBuffer buffer = mapSegment();
            final int offset = (int)(position - segment.basePosition());
            final int result = check(buffer, offset, position);
            final int frameType = buffer.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN);
            if (PADDING_FRAME_TYPE == frameType)
            {
                position += result;
                continue;
            }
            if (position + result > bound)
            {
                break;
            }
            final int frameLength = buffer.getInt(offset, LITTLE_ENDIAN);
            final long framePosition = position;
            position += result;
            count++;
            handler.onFrame(buffer, offset + HEADER_LENGTH, frameLength - HEADER_LENGTH, framePosition,
                buffer.getLong(offset + TERM_OFFSET, LITTLE_ENDIAN), frameType);
        }
        return count;
    }

    /**
     * Hand a block of whole frames, exactly as stored, to a handler: everything from the reader's position up to
     * the limit, within one segment and at most maxBytes (but always at least one frame if one is available).
     *
     * @param handler       receives the block.
     * @param limitPosition read no frame that ends beyond this.
     * @param maxBytes      bound on the block's length.
     * @return log bytes consumed (endPosition - startPosition of the block), or 0 if nothing was available.
     */
    public int readBlock(final BlockHandler handler, final long limitPosition, final int maxBytes)
    {
        damagedAt = -1; // what this call finds, if anything: an earlier finding is not reported again
        damage = null;
        final long bound = Math.min(limitPosition, log.publishedPosition());
        if (position >= bound)
        {
            return 0;
        }
        final UnsafeBuffer buffer = mapSegment();
        final int startOffset = (int)(position - segment.basePosition());
        int offset = startOffset;
        long end = position;
        while (end < bound)
        {
            final int result = stopAtDamage ? checkOrStop(buffer, offset, end) : check(buffer, offset, end);
            if (result < 0)
            {
                break;
            }
            final boolean padding = PADDING_FRAME_TYPE == buffer.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN);
            final int bytes = padding ? HEADER_LENGTH : result;
            if ((!padding && end + result > bound) || (offset > startOffset && offset - startOffset + bytes > maxBytes))
            {
                break;
            }
            offset += bytes;
            end += result;
            if (padding || end == segment.basePosition() + segmentLength)
            {
                break;
            }
        }
        if (end == position)
        {
            return 0;
        }
        final long start = position;
        position = end;
        handler.onBlock(buffer, startOffset, offset - startOffset, start, end);
        return (int)(end - start);
    }

    /**
     * Move the reader, for example back to re-send from an earlier position.
     *
     * @param newPosition start of a frame in the log.
     */
    public void seek(final long newPosition)
    {
        if (newPosition < log.startPosition())
        {
            throw new ArchiveException(PURGED, null, newPosition, "log starts at " + log.startPosition());
        }
        position = newPosition;
    }

    FrameValidator validator()
    {
        return validator;
    }

    public void close()
    {
        release();
    }

    private int checkOrStop(final UnsafeBuffer buffer, final int offset, final long expectedPosition)
    {
        final int remaining = segmentLength - offset;
        final int result = validator.check(buffer, offset, remaining, remaining, expectedPosition);
        if (result < 0)
        {
            damagedAt = expectedPosition;
            damage = "frame at position " + expectedPosition + " in " + segment.file() + ": " +
                FrameValidator.describe(result);
        }
        return result;
    }

    private int check(final UnsafeBuffer buffer, final int offset, final long expectedPosition)
    {
        final int remaining = segmentLength - offset;
        final int result = validator.check(buffer, offset, remaining, remaining, expectedPosition);
        if (result < 0)
        {
            throw new ArchiveException(
                CORRUPT_FRAME, segment.file(), expectedPosition, FrameValidator.describe(result));
        }
        return result;
    }

    /**
     * The mapping of the segment holding the reader's position. The segment the reader left is kept mapped until it
     * leaves another, because a reader that serves several consumers goes back and forth across a boundary: the
     * leader's replication reader seeks to each follower's position in turn, and at every rollover they, and the
     * service, cross it at different moments. Mapping one segment at a time, a leader mapped and unmapped the two
     * segments four to five times per rollover, and each teardown of a segment read through holds the process's mmap
     * lock for 2-3 ms, which the next mmap waits for: traced over a sweep up to 20k msg/s with three rollovers, the
     * leader's thread made 16 mappings and spent 4.6 ms in mmap; keeping the last, 4 and 0.07 ms.
     */
    private UnsafeBuffer mapSegment()
    {
        final int deletions = log.segmentDeletions();
        if (deletions != deletionsSeen)
        {
            // Truncation deleted segments: a file made under one of those names later is a new file, and a
            // mapping held here would show the old one.
            release();
            deletionsSeen = deletions;
        }
        final long base = FrameDescriptor.segmentBase(position, segmentLength);
        if (null != segment && segment.basePosition() == base)
        {
            return segment.buffer();
        }
        if (null != previous && previous.basePosition() == base)
        {
            final MappedSegment left = segment;
            segment = previous;
            previous = left;
            return segment.buffer();
        }
        if (position < log.startPosition())
        {
            throw new ArchiveException(PURGED, null, position, "log starts at " + log.startPosition());
        }
        // Mapped before the oldest is handed to the unmap thread, so this mmap does not wait for the process's mmap
        // lock behind that teardown.
        final MappedSegment next = MappedSegment.mapOrNull(log.directory(), base, segmentLength);
        if (null == next)
        {
            final ArchiveException.Reason reason = position < log.startPosition() ? PURGED :
                ArchiveException.Reason.MISSING_SEGMENT;
            throw new ArchiveException(reason, SegmentFiles.segmentFile(log.directory(), base), position,
                "segment not present (log starts at " + log.startPosition() + ")");
        }
        if (null != previous)
        {
            // Not here: tearing down a 64 MiB mapping took milliseconds on the caller's thread.
            SegmentUnmapper.unmapLater(previous);
        }
        previous = segment;
        segment = next;
        return segment.buffer();
    }

    private void release()
    {
        if (null != segment)
        {
            SegmentUnmapper.unmapLater(segment);
            segment = null;
        }
        if (null != previous)
        {
            SegmentUnmapper.unmapLater(previous);
            previous = null;
        }
    }
}
