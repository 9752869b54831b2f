package io.lockstep.archive;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_FRAME;
import static io.lockstep.archive.ArchiveException.Reason.MISSING_SEGMENT;
import static io.lockstep.archive.ArchiveException.Reason.TRUNCATED_SEGMENT;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Walks segment files, checks every frame, and decides where the log ends.
 * <p>
 * Telling a torn tail from damage, with a trusted promise ({@link PromiseFile}): everything at or above the promised
 * position was never acknowledged, so a bad frame there, and all that follows it, is a tail to cut; a bad frame
 * below it is damage to data this member may have acknowledged. Either way the log ends at the bad frame (nothing
 * past it can be served: its order is broken), and the report says which it was, so the caller can keep the promise
 * and get the lost frames back from the cluster before acting as if it held them.
 * <p>
 * Without a trusted promise (a log written before promises existed, or one written under {@code NONE} before the
 * machine restarted) the old rule applies: one flush writes at most {@code maxBatchLength} bytes, so a crash can
 * damage only bytes within that distance of the start of the last write. A bad frame (or a hole) at position P with
 * all data after it ending before {@code P + maxBatchLength}, and no later segment holding data, is a torn tail and is
 * cut. Anything else is corruption: an error naming the file and position, and nothing past P is served.
 * Read-only: the caller applies any cut.
 */
final class LogScanner
{
    private static final int END_OF_SEGMENT = 0;

    private final Path directory;
    private final LogDescriptorFile.Values values;
    private final FrameValidator validator;
    private final long promisedPosition;
    private long lastTerm;
    private long frames;
    private long stopPosition;
    private boolean checkPaddingSpace;

    LogScanner(final Path directory, final LogDescriptorFile.Values values)
    {
        this(directory, values, PromiseFile.UNKNOWN);
    }

    /**
     * @param promisedPosition the highest position the log may have acknowledged, or {@link PromiseFile#UNKNOWN}.
     */
    LogScanner(final Path directory, final LogDescriptorFile.Values values, final long promisedPosition)
    {
        this.directory = directory;
        this.values = values;
        this.promisedPosition = promisedPosition;
        this.validator = new FrameValidator(values.maxBatchLength() - HEADER_LENGTH);
    }

    /**
     * @param wholeLog     true to check every segment, false for only the last two.
     * @param checkPadding true to insist that the space padding frames cover is still zero (verification).
     * @param handler      given every non-padding frame checked, or null.
     * @return where the log starts and ends, and any torn tail to cut.
     */
    RecoveryReport scan(final boolean wholeLog, final boolean checkPadding, final FrameHandler handler)
    {
        final long[] bases = SegmentFiles.listBasePositions(directory);
        checkLayout(bases);
        final int segmentLength = values.segmentLength();
        lastTerm = ArchiveLog.NULL_TERM;
        frames = 0;
        // Padding space is never written, so whole-log verification insists it is still zero.
        checkPaddingSpace = checkPadding;
        if (0 == bases.length)
        {
            return new RecoveryReport(values.initialPosition(), values.initialPosition(), lastTerm, 0, null, -1, 0,
                null,
                promisedPosition);
        }

        final long startPosition = Math.max(bases[0], values.initialPosition());
        final int last = bases.length - 1;
        for (int i = wholeLog ? 0 : Math.max(0, last - 1); i <= last; i++)
        {
            try (MappedSegment segment = map(bases[i]))
            {
                final int code = walk(segment, handler);
                if (END_OF_SEGMENT == code)
                {
                    continue;
                }
                if (i < last)
                {
                    final long laterDataEnd = dataEndAfter(bases, i + 1);
                    if (laterDataEnd < 0)
                    {
                        // The log ended in this segment and a new, still empty segment had been created.
                        return judgeTail(startPosition, segment, code);
                    }
                    if (PromiseFile.UNKNOWN == promisedPosition)
                    {
                        throw new ArchiveException(CORRUPT_FRAME, segment.file(), stopPosition,
                            FrameValidator.describe(code) + ", and later segments hold data");
                    }
                    return tail(startPosition, segment, code, laterDataEnd);
                }
                return judgeTail(startPosition, segment, code);
            }
        }
        return new RecoveryReport(startPosition, bases[last] + segmentLength, lastTerm, frames, null, -1, 0, null,
            promisedPosition);
    }

    private int walk(final MappedSegment segment, final FrameHandler handler)
    {
        final UnsafeBuffer buffer = segment.buffer();
        final long base = segment.basePosition();
        final int segmentLength = values.segmentLength();
        long position = Math.max(base, values.initialPosition());
        while (position < base + segmentLength)
        {
            final int offset = (int)(position - base);
            final int remaining = segmentLength - offset;
            final int result = validator.check(buffer, offset, remaining, remaining, position);
            if (result < 0)
            {
                stopPosition = position;
                return result;
            }
            lastTerm = buffer.getLong(offset + TERM_OFFSET, LITTLE_ENDIAN);
            final int frameType = buffer.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN);
            if (PADDING_FRAME_TYPE == frameType)
            {
                if (checkPaddingSpace && segment.lastNonZeroOffset(offset + HEADER_LENGTH) >= 0)
                {
                    throw new ArchiveException(CORRUPT_FRAME, segment.file(), position,
                        "the space a padding frame covers holds data");
                }
            }
            else
            {
                frames++;
                if (null != handler)
                {
                    final int frameLength = buffer.getInt(offset, LITTLE_ENDIAN);
                    handler.onFrame(buffer, offset + HEADER_LENGTH, frameLength - HEADER_LENGTH, position, lastTerm,
                        frameType);
                }
            }
            position += result;
        }
        stopPosition = position;
        return END_OF_SEGMENT;
    }

    private RecoveryReport judgeTail(final long startPosition, final MappedSegment segment, final int code)
    {
        final int stopOffset = (int)(stopPosition - segment.basePosition());
        final int lastNonZero = segment.lastNonZeroOffset(stopOffset);
        if (lastNonZero < 0)
        {
            return new RecoveryReport(startPosition, stopPosition, lastTerm, frames, null, -1, 0, null,
                promisedPosition);
        }

        final long dataEnd = segment.basePosition() + lastNonZero + 1;
        if (PromiseFile.UNKNOWN != promisedPosition || dataEnd - stopPosition <= values.maxBatchLength())
        {
            return tail(startPosition, segment, code, dataEnd);
        }
        throw new ArchiveException(CORRUPT_FRAME, segment.file(), stopPosition, FrameValidator.describe(code) +
            "; data continues to position " + dataEnd + ", beyond one write batch (" + values.maxBatchLength() +
            " bytes), so this is corruption, not a torn write");
    }

    private RecoveryReport tail(final long startPosition, final MappedSegment segment, final int code,
        final long dataEnd)
    {
        return new RecoveryReport(startPosition, stopPosition, lastTerm, frames, segment.file(), stopPosition,
            dataEnd - stopPosition, FrameValidator.describe(code), promisedPosition);
    }

    /**
     * @return the position after the last non-zero byte in the segments from index {@code from} on, or -1 if they
     * are all zeros.
     */
    private long dataEndAfter(final long[] bases, final int from)
    {
        for (int i = bases.length - 1; i >= from; i--)
        {
            try (MappedSegment segment = map(bases[i]))
            {
                final int lastNonZero = segment.lastNonZeroOffset(0);
                if (lastNonZero >= 0)
                {
                    return bases[i] + lastNonZero + 1;
                }
            }
        }
        return -1;
    }

    private MappedSegment map(final long basePosition)
    {
        final MappedSegment segment = MappedSegment.mapOrNull(directory, basePosition, values.segmentLength());
        if (null == segment)
        {
            throw new ArchiveException(MISSING_SEGMENT, SegmentFiles.segmentFile(directory, basePosition),
                basePosition, "segment vanished while scanning");
        }
        return segment;
    }

    private void checkLayout(final long[] bases)
    {
        final int segmentLength = values.segmentLength();
        for (int i = 0; i < bases.length; i++)
        {
            final Path file = SegmentFiles.segmentFile(directory, bases[i]);
            if (bases[i] % segmentLength != 0)
            {
                throw new ArchiveException(CORRUPT_FRAME, file, bases[i],
                    "segment name is not a multiple of the segment length " + segmentLength);
            }
            if (i > 0 && bases[i] != bases[i - 1] + segmentLength)
            {
                final long missing = bases[i - 1] + segmentLength;
                throw new ArchiveException(MISSING_SEGMENT, SegmentFiles.segmentFile(directory, missing), missing,
                    "segment missing between " + SegmentFiles.name(bases[i - 1]) + " and " + file.getFileName());
            }
            final long size = SegmentFiles.size(file);
            if (size != segmentLength)
            {
                throw new ArchiveException(TRUNCATED_SEGMENT, file, bases[i] + Math.min(size, segmentLength),
                    "segment is " + size + " bytes, expected " + segmentLength);
            }
        }
        if (bases.length > 0 && bases[0] + segmentLength <= values.initialPosition())
        {
            throw new ArchiveException(CORRUPT_FRAME, SegmentFiles.segmentFile(directory, bases[0]), bases[0],
                "segment lies wholly below the log's initial position " + values.initialPosition());
        }
    }
}
