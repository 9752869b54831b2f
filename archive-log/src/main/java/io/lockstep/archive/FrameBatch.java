package io.lockstep.archive;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_FRAME;
import static io.lockstep.archive.FrameDescriptor.CHECKSUM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.POSITION_OFFSET;
import static io.lockstep.archive.FrameDescriptor.RESERVED_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static io.lockstep.archive.FrameDescriptor.alignedLength;
import static io.lockstep.archive.FrameDescriptor.segmentBase;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The frames added to a log since its last flush, laid out as they will be on disk, in one preallocated direct
 * buffer: the writer's whole batch goes to the file in one write per segment it touches. A padding frame that ends
 * a segment is held as its header only, though it covers the log to the segment end; {@link #splitOffset()} is where
 * the bytes of the next segment start. Checksums are computed once, just before the write.
 * <p>
 * Single-writer, like the log that owns it.
 */
final class FrameBatch
{
    /** {@link #tryClaim} and {@link #appendFrames}: the batch cannot take the frame now; flush, then again. */
    static final int FULL = -2;

    private final int segmentLength;
    private final int maxBatchLength;
    private final int maxPayloadLength;
    private final FrameValidator validator;
    private final FrameChecksum checksum = new FrameChecksum();
    private final ByteBuffer byteBuffer;
    private final UnsafeBuffer buffer;

    private int length;
    private int splitOffset = -1;
    private long startPosition;
    private long pendingPosition;
    /** Term of the frame that ends at {@link #pendingPosition}: what a promise made at that position names. */
    private long lastTerm;

    FrameBatch(final int segmentLength, final int maxBatchLength, final long position, final long lastTerm)
    {
        this.segmentLength = segmentLength;
        this.maxBatchLength = maxBatchLength;
        this.maxPayloadLength = maxBatchLength - 2 * HEADER_LENGTH;
        this.validator = new FrameValidator(maxBatchLength - HEADER_LENGTH);
        this.byteBuffer = BufferUtil.allocateDirectAligned(maxBatchLength, FrameDescriptor.FRAME_ALIGNMENT);
        this.buffer = new UnsafeBuffer(byteBuffer);
        this.startPosition = position;
        this.pendingPosition = position;
        this.lastTerm = lastTerm;
    }

    /** @return the payload index of a new frame in {@link #buffer()}, or {@link #FULL}. */
    int tryClaim(final long term, final int frameType, final int length)
    {
        if (frameType < 0)
        {
            throw new IllegalArgumentException("negative frame types are reserved: " + frameType);
        }
        if (length < 0 || length > maxPayloadLength)
        {
            throw new IllegalArgumentException("payload length " + length + " not in [0, " + maxPayloadLength + "]");
        }
        final int frameLength = HEADER_LENGTH + length;
        final int aligned = alignedLength(frameLength);
        long position = pendingPosition;
        final long segmentEnd = segmentBase(position, segmentLength) + segmentLength;
        final boolean padding = position + aligned > segmentEnd;
        if (this.length + aligned + (padding ? HEADER_LENGTH : 0) > maxBatchLength ||
            reachesSecondSegmentEnd((padding ? segmentEnd : position) + aligned))
        {
            return FULL;
        }
        if (padding)
        {
            putHeader(this.length, (int)(segmentEnd - position), term, position, PADDING_FRAME_TYPE);
            advance(HEADER_LENGTH, segmentEnd);
            position = segmentEnd;
        }
        final int frameOffset = this.length;
        putHeader(frameOffset, frameLength, term, position, frameType);
        lastTerm = term;
        buffer.setMemory(frameOffset + frameLength, aligned - frameLength, (byte)0);
        advance(aligned, position + aligned);
        return frameOffset + HEADER_LENGTH;
    }

    /**
     * Add whole frames as another member's log holds them, each checked first; all or none.
     *
     * @return the position after the frames, or {@link #FULL}.
     * @throws ArchiveException with reason {@code CORRUPT_FRAME} if any frame is invalid or misplaced.
     */
    long appendFrames(final DirectBuffer frames, final int offset, final int length)
    {
        final int end = offset + length;
        long position = pendingPosition;
        int required = 0;
        for (int o = offset; o < end; )
        {
            final int remainingSegment = (int)(segmentBase(position, segmentLength) + segmentLength - position);
            final int result = validator.check(frames, o, end - o, remainingSegment, position);
            if (result < 0)
            {
                throw new ArchiveException(CORRUPT_FRAME, null, position,
                    "replicated frame rejected: " + FrameValidator.describe(result));
            }
            final int bytes = isPadding(frames, o) ? HEADER_LENGTH : result;
            required += bytes;
            o += bytes;
            position += result;
        }
        if (reachesSecondSegmentEnd(position))
        {
            if (0 == this.length)
            {
                throw new ArchiveException(CORRUPT_FRAME, null, pendingPosition,
                    "replicated frames cover two segment ends, which no block a log reader hands out does");
            }
            return FULL;
        }
        if (this.length + required > maxBatchLength)
        {
            return FULL;
        }
        for (int o = offset; o < end; )
        {
            final boolean padding = isPadding(frames, o);
            final int logBytes = padding ?
                (int)(segmentBase(pendingPosition, segmentLength) + segmentLength - pendingPosition) :
                alignedLength(frames.getInt(o, LITTLE_ENDIAN));
            final int bytes = padding ? HEADER_LENGTH : logBytes;
            buffer.putBytes(this.length, frames, o, bytes);
            advance(bytes, pendingPosition + logBytes);
            lastTerm = frames.getLong(o + TERM_OFFSET, LITTLE_ENDIAN);
            o += bytes;
        }
        return pendingPosition;
    }

    /** Fill in every frame's checksum: the frames are final once the write begins. */
    void computeChecksums()
    {
        int offset = 0;
        while (offset < length)
        {
            final int frameLength = buffer.getInt(offset, LITTLE_ENDIAN);
            final boolean padding = isPadding(buffer, offset);
            buffer.putInt(offset + CHECKSUM_OFFSET, checksum.compute(buffer, offset, frameLength, padding),
                LITTLE_ENDIAN);
            offset += padding ? HEADER_LENGTH : alignedLength(frameLength);
        }
    }

    /** @return the batch's bytes from one index to another, ready for a channel write. */
    ByteBuffer bytes(final int from, final int to)
    {
        byteBuffer.clear();
        byteBuffer.limit(to).position(from);
        return byteBuffer;
    }

    /** Empty the batch: the log is written up to {@link #pendingPosition()}. */
    void written()
    {
        startPosition = pendingPosition;
        length = 0;
        splitOffset = -1;
    }

    /**
     * Drop the frames not yet written: never durable, so never acknowledged. The batch starts again where the
     * written log ends.
     */
    void discard()
    {
        pendingPosition = startPosition;
        length = 0;
        splitOffset = -1;
    }

    /** Start the empty batch at a new end of the log, after a truncation (the log refuses one with frames pending). */
    void restartAt(final long position)
    {
        assert 0 == length : length + " bytes pending";
        startPosition = position;
        pendingPosition = position;
    }

    MutableDirectBuffer buffer()
    {
        return buffer;
    }

    int length()
    {
        return length;
    }

    /** @return where the bytes of the next segment start in the batch, or -1 if it ends in one segment. */
    int splitOffset()
    {
        return splitOffset;
    }

    /** @return the log position of the batch's first byte. */
    long startPosition()
    {
        return startPosition;
    }

    /** @return the log position after the batch's last frame. */
    long pendingPosition()
    {
        return pendingPosition;
    }

    /** @return the term of the frame that ends at {@link #pendingPosition()}. */
    long lastTerm()
    {
        return lastTerm;
    }

    int maxPayloadLength()
    {
        return maxPayloadLength;
    }

    FrameValidator validator()
    {
        return validator;
    }

    static boolean isPadding(final DirectBuffer frames, final int frameOffset)
    {
        return PADDING_FRAME_TYPE == frames.getInt(frameOffset + TYPE_OFFSET, LITTLE_ENDIAN);
    }

    private void putHeader(final int offset, final int frameLength, final long term, final long position,
        final int type)
    {
        buffer.putInt(offset, frameLength, LITTLE_ENDIAN);
        buffer.putInt(offset + CHECKSUM_OFFSET, 0, LITTLE_ENDIAN);
        buffer.putLong(offset + TERM_OFFSET, term, LITTLE_ENDIAN);
        buffer.putLong(offset + POSITION_OFFSET, position, LITTLE_ENDIAN);
        buffer.putInt(offset + TYPE_OFFSET, type, LITTLE_ENDIAN);
        buffer.putInt(offset + RESERVED_OFFSET, 0, LITTLE_ENDIAN);
    }

    /**
     * One write covers at most one segment end. A batch holds only the header of a padding frame but covers the log to
     * the segment end, so a batch shorter than {@code maxBatchLength} can still reach a second end (a follower that
     * takes several blocks before it writes did, and stopped): such frames wait for the next batch. An empty batch
     * never reaches two ends: a frame is shorter than a segment, and a reader's block ends at the first end.
     *
     * @param endPosition where the log would end with the frames added.
     * @return true if that is at or past the second segment end from where the batch starts.
     */
    private boolean reachesSecondSegmentEnd(final long endPosition)
    {
        // An empty batch starts where the log is pending: the two move together whenever the batch is emptied.
        return endPosition >= segmentBase(startPosition, segmentLength) + 2L * segmentLength;
    }

    /**
     * Account for bytes added to the batch. When the log reaches a segment end, the batch bytes after this point
     * belong to the next segment file.
     */
    private void advance(final int batchBytes, final long newPendingPosition)
    {
        length += batchBytes;
        pendingPosition = newPendingPosition;
        if (0 == (newPendingPosition & (segmentLength - 1)))
        {
            // Appends stop short of a second segment end (reachesSecondSegmentEnd): reaching one is a bug here.
            if (splitOffset >= 0)
            {
                throw new IllegalStateException("batch crosses two segment ends: splitOffset=" + splitOffset);
            }
            splitOffset = length;
        }
    }
}
