package io.lockstep.archive;

import org.agrona.DirectBuffer;

import java.nio.file.Path;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_FRAME;
import static io.lockstep.archive.ArchiveException.Reason.NOT_FRAME_BOUNDARY;
import static io.lockstep.archive.ArchiveException.Reason.PURGED;
import static io.lockstep.archive.FrameDescriptor.CHECKSUM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.FRAME_LENGTH_OFFSET;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.POSITION_OFFSET;
import static io.lockstep.archive.FrameDescriptor.RESERVED_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static io.lockstep.archive.FrameDescriptor.alignedLength;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Decides whether the bytes at a position are a whole, valid frame. Used by recovery, readers, verification and the
 * follower's verbatim append, so all of them agree on what a good frame is. Not thread safe.
 */
final class FrameValidator
{
    /** Nothing written here: the frame length is zero. */
    static final int NO_FRAME = -1;
    /** The length is below a header, beyond the bound, or runs past the end of the segment. */
    static final int BAD_LENGTH = -2;
    /** The frame says it belongs at another position. */
    static final int BAD_POSITION = -3;
    /** The checksum does not match. */
    static final int BAD_CHECKSUM = -4;
    /** A padding frame that does not end exactly at the end of its segment. */
    static final int BAD_PADDING = -5;
    /** A reserved header field is not zero. */
    static final int BAD_HEADER = -6;

    private final FrameChecksum checksum = new FrameChecksum();
    private final int maxFrameLength;

    /**
     * @param maxFrameLength largest unaligned length a non-padding frame may have.
     */
    FrameValidator(final int maxFrameLength)
    {
        this.maxFrameLength = maxFrameLength;
    }

    /**
     * @param buffer           holding the bytes.
     * @param offset           index of the frame header in the buffer.
     * @param available        bytes readable from offset (a padding frame needs only its header readable).
     * @param remainingSegment bytes from the frame to the end of its segment.
     * @param expectedPosition log position the frame must carry.
     * @return the number of log bytes the frame occupies (aligned length; the rest of the segment for padding), or
     * a negative code: {@link #NO_FRAME}, {@link #BAD_LENGTH}, {@link #BAD_POSITION}, {@link #BAD_CHECKSUM},
     * {@link #BAD_PADDING}, {@link #BAD_HEADER}.
     */
    int check(
        final DirectBuffer buffer,
        final int offset,
        final int available,
        final int remainingSegment,
        final long expectedPosition)
    {
        if (remainingSegment < HEADER_LENGTH || available < HEADER_LENGTH)
        {
            return BAD_LENGTH;
        }
        final int frameLength = buffer.getInt(offset + FRAME_LENGTH_OFFSET, LITTLE_ENDIAN);
        if (0 == frameLength)
        {
            return NO_FRAME;
        }
        if (frameLength < HEADER_LENGTH || alignedLength(frameLength) > remainingSegment)
        {
            return BAD_LENGTH;
        }

        final boolean padding = buffer.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN) == PADDING_FRAME_TYPE;
        if (!padding && (frameLength > maxFrameLength || alignedLength(frameLength) > available))
        {
            return BAD_LENGTH;
        }
        if (buffer.getInt(offset + CHECKSUM_OFFSET, LITTLE_ENDIAN) != checksum.compute(buffer, offset, frameLength,
            padding))
        {
            return BAD_CHECKSUM;
        }
        if (buffer.getLong(offset + POSITION_OFFSET, LITTLE_ENDIAN) != expectedPosition)
        {
            return BAD_POSITION;
        }
        if (buffer.getInt(offset + RESERVED_OFFSET, LITTLE_ENDIAN) != 0)
        {
            return BAD_HEADER;
        }
        if (padding && frameLength != remainingSegment)
        {
            return BAD_PADDING;
        }

        return padding ? remainingSegment : alignedLength(frameLength);
    }

    /**
     * @param code a negative result of {@link #check}.
     * @return what it means, for error messages.
     */
    static String describe(final int code)
    {
        switch (code)
        {
            case NO_FRAME: return "no frame (zero length) where one was expected";
            case BAD_LENGTH: return "frame length out of range";
            case BAD_POSITION: return "frame carries another position (misdirected or stale write)";
            case BAD_CHECKSUM: return "checksum mismatch";
            case BAD_PADDING: return "padding frame does not end at the segment end";
            case BAD_HEADER: return "reserved header field not zero";
            default: return "unknown frame error " + code;
        }
    }

    /**
     * Walk the frames of a position's segment up to the position: it must land exactly on it.
     *
     * @param directory   log directory.
     * @param segmentLength length of each segment.
     * @param floor       where frames start (the log's start, or its initial position).
     * @param position    the position to check.
     * @throws ArchiveException {@code NOT_FRAME_BOUNDARY} if no frame starts there, {@code CORRUPT_FRAME} if a frame
     *                          on the way is damaged, {@code PURGED} if the segment is gone.
     */
    void checkFrameBoundary(final Path directory, final int segmentLength, final long floor, final long position)
    {
        if (!FrameDescriptor.isAligned(position))
        {
            throw new ArchiveException(NOT_FRAME_BOUNDARY, null, position, "position is not frame aligned");
        }
        final long base = FrameDescriptor.segmentBase(position, segmentLength);
        long walk = Math.max(base, floor);
        if (walk == position)
        {
            return;
        }
        try (MappedSegment segment = MappedSegment.mapOrNull(directory, base, segmentLength))
        {
            if (null == segment)
            {
                throw new ArchiveException(PURGED, SegmentFiles.segmentFile(directory, base), position,
                    "segment not present");
            }
            while (walk < position)
            {
                final int offset = (int)(walk - base);
                final int remaining = segmentLength - offset;
                final int result = check(segment.buffer(), offset, remaining, remaining, walk);
                if (result < 0)
                {
                    throw new ArchiveException(CORRUPT_FRAME, segment.file(), walk, describe(result));
                }
                walk += result;
            }
        }
        if (walk != position)
        {
            throw new ArchiveException(NOT_FRAME_BOUNDARY, SegmentFiles.segmentFile(directory, base), position,
                "no frame starts here (a frame spans it)");
        }
    }
}
