package io.lockstep.archive;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A whole segment mapped read-only. Segment files never shrink (they are created full length and only deleted
 * whole), so a mapping never faults on a vanished page; a deleted file stays readable through an existing mapping.
 */
final class MappedSegment implements AutoCloseable, Runnable
{
    private final Path file;
    private final long basePosition;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;

    private MappedSegment(final Path file, final long basePosition, final MappedByteBuffer mapped)
    {
        this.file = file;
        this.basePosition = basePosition;
        this.mapped = mapped;
        this.buffer = new UnsafeBuffer(mapped);
    }

    /**
     * @return the mapping, or null if the file does not exist.
     */
    static MappedSegment mapOrNull(final Path directory, final long basePosition, final int segmentLength)
    {
        final Path file = SegmentFiles.segmentFile(directory, basePosition);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final long size = channel.size();
            if (size < segmentLength)
            {
                throw new ArchiveException(ArchiveException.Reason.TRUNCATED_SEGMENT, file, basePosition + size,
                    "segment is " + size + " bytes, expected " + segmentLength);
            }
            return new MappedSegment(file, basePosition, channel.map(FileChannel.MapMode.READ_ONLY, 0, segmentLength));
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot map segment", ex);
        }
    }

    Path file()
    {
        return file;
    }

    long basePosition()
    {
        return basePosition;
    }

    UnsafeBuffer buffer()
    {
        return buffer;
    }

    /**
     * @param fromOffset where to start looking.
     * @return offset of the last non-zero byte at or after fromOffset, or -1 if all are zero.
     */
    int lastNonZeroOffset(final int fromOffset)
    {
        int offset = buffer.capacity() - Long.BYTES;
        while (offset >= fromOffset)
        {
            final long word = buffer.getLong(offset);
            if (0 != word)
            {
                for (int i = offset + Long.BYTES - 1; i >= offset; i--)
                {
                    if (0 != buffer.getByte(i))
                    {
                        return i;
                    }
                }
            }
            offset -= Long.BYTES;
        }
        // fromOffset is frame aligned, so the word walk above covers it exactly.
        return -1;
    }

    public void close()
    {
        IoUtil.unmap(mapped);
    }

    /** Unmap on the {@link SegmentUnmapper}'s thread. */
    public void run()
    {
        try
        {
            close();
        }
        catch (final RuntimeException ex)
        {
            SegmentUnmapper.report(this, ex);
        }
    }
}
