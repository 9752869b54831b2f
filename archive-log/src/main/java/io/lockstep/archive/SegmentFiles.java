package io.lockstep.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Naming, listing, creation and removal of segment files. A segment is named by the log position of its first byte
 * (20 digits, so names sort by position) and always has the full segment length: it is created under a temporary
 * name, extended (sparse, so it reads as zeros) and renamed, so a crash never leaves a short segment behind.
 */
final class SegmentFiles
{
    static final String SUFFIX = ".seg";
    private static final String TMP_SUFFIX = ".seg.tmp";
    /** A segment being deleted a step at a time: out of the log, not yet gone. */
    static final String PURGING_SUFFIX = ".seg.purging";
    /** Bytes cut from a segment being deleted per step, at most (an eighth of a smaller segment). */
    static final int PURGE_STEP_LENGTH = 1024 * 1024;
    private static final int NAME_DIGITS = 20;
    private static final int ZERO_CHUNK = 64 * 1024;

    private SegmentFiles()
    {
    }

    static Path segmentFile(final Path directory, final long basePosition)
    {
        return directory.resolve(name(basePosition));
    }

    static String name(final long basePosition)
    {
        final String digits = Long.toString(basePosition);
        return "0".repeat(NAME_DIGITS - digits.length()) + digits + SUFFIX;
    }

    /**
     * @param directory log directory.
     * @return base positions of the segment files present, ascending.
     */
    static long[] listBasePositions(final Path directory)
    {
        // A plain loop, not a stream pipeline: this runs on the purge thread after every snapshot, seldom enough to
        // stay interpreted, where the pipeline cost milliseconds of CPU (profiled) at the snapshot's busiest moment.
        long[] bases = new long[16];
        int count = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory))
        {
            for (final Path file : files)
            {
                final String name = file.getFileName().toString();
                if (isSegmentName(name))
                {
                    if (count == bases.length)
                    {
                        bases = Arrays.copyOf(bases, 2 * count);
                    }
                    bases[count++] = Long.parseLong(name, 0, NAME_DIGITS, 10);
                }
            }
        }
        catch (final IOException ex)
        {
            throw ioError(directory, "cannot list segment files", ex);
        }
        final long[] sorted = Arrays.copyOf(bases, count);
        Arrays.sort(sorted);
        return sorted;
    }

    private static boolean isSegmentName(final String name)
    {
        if (name.length() != NAME_DIGITS + SUFFIX.length() || !name.endsWith(SUFFIX))
        {
            return false;
        }
        for (int i = 0; i < NAME_DIGITS; i++)
        {
            final char c = name.charAt(i);
            if (c < '0' || c > '9')
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Create a full-length segment atomically and open it for writing.
     *
     * @param directory     log directory.
     * @param basePosition  position of the segment's first byte.
     * @param segmentLength length of the segment.
     * @param sync          true to make the new file and its directory entry durable before returning.
     * @return the open channel.
     */
    static FileChannel create(final Path directory, final long basePosition, final int segmentLength,
        final boolean sync)
    {
        final Path file = segmentFile(directory, basePosition);
        final Path tmp = directory.resolve(name(basePosition).replace(SUFFIX, TMP_SUFFIX));
        try
        {
            try (FileChannel channel = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
            {
                // Sparse: reads as zeros, and zeros mean "no frame here". Writing one byte at the end sets the length.
                channel.write(ByteBuffer.wrap(new byte[1]), segmentLength - 1L);
                if (sync)
                {
                    channel.force(true);
                }
            }
            // Replacing is safe: a segment is only re-created after recovery found it empty (all zeros).
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            if (sync)
            {
                fsyncDirectory(directory);
            }
            return openForWrite(file);
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot create segment", ex);
        }
    }

    static FileChannel openForWrite(final Path file)
    {
        try
        {
            return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot open segment for writing", ex);
        }
    }

    static void delete(final Path directory, final long basePosition)
    {
        final Path file = segmentFile(directory, basePosition);
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot delete segment", ex);
        }
    }

    /**
     * Delete a segment a step at a time: renamed out of the log first, durably, so that a crash never leaves a short
     * file under a segment's name; then cut from its end by {@link #PURGE_STEP_LENGTH} (or an eighth of the segment)
     * per step, with a pause after each; then unlinked. Why: unlinking a written 64 MiB segment in one call ran the
     * deleting thread for about 10 ms of CPU under load (freeing the file's cached pages and its blocks, with a
     * discard, at once), and a trace at 40k msg/s showed the leader's thread waiting runnable behind its own purge
     * thread 2-2.7 ms at a time while the other CPU was idle: the scheduler kept the two on one CPU. One step costs
     * 0.16-0.33 ms (measured alone).
     *
     * @param pauseNs pause after each step; 0 to unlink at once.
     */
    static void deleteGradually(final Path directory, final long basePosition, final long pauseNs)
    {
        if (0 == pauseNs)
        {
            delete(directory, basePosition);
            return;
        }
        final Path file = segmentFile(directory, basePosition);
        final Path purging = directory.resolve(name(basePosition).replace(SUFFIX, PURGING_SUFFIX));
        try
        {
            try
            {
                Files.move(file, purging, StandardCopyOption.ATOMIC_MOVE);
            }
            catch (final NoSuchFileException ex)
            {
                return;
            }
            fsyncDirectory(directory);
            try (FileChannel channel = FileChannel.open(purging, StandardOpenOption.WRITE))
            {
                final long step = Math.max(1, Math.min(PURGE_STEP_LENGTH, channel.size() / 8));
                for (long size = channel.size() - step; size > 0; size -= step)
                {
                    channel.truncate(size);
                    LockSupport.parkNanos(pauseNs);
                }
            }
            Files.delete(purging);
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot delete segment", ex);
        }
    }

    /**
     * Delete the segments that lie wholly below a position, each a step at a time (see {@link #deleteGradually}).
     *
     * @param fsync force the directory after, so that the deletions survive a crash.
     * @return segments deleted.
     */
    static int deleteBelow(
        final Path directory, final int segmentLength, final long position, final long pauseNs, final boolean fsync)
    {
        int deleted = 0;
        for (final long base : listBasePositions(directory))
        {
            if (base + segmentLength <= position)
            {
                deleteGradually(directory, base, pauseNs);
                deleted++;
            }
        }
        if (deleted > 0 && fsync)
        {
            fsyncDirectory(directory);
        }
        return deleted;
    }

    /**
     * Delete the segments that start above a base position, highest first: a crash part-way leaves a contiguous,
     * longer log, never one with a hole.
     *
     * @param bases the directory's segments, in ascending order.
     */
    static void deleteAbove(final Path directory, final long[] bases, final long base)
    {
        for (int i = bases.length - 1; i >= 0 && bases[i] > base; i--)
        {
            delete(directory, bases[i]);
        }
    }

    /**
     * Delete what a step-by-step deletion left when the process stopped (those files are out of the log already),
     * and say so.
     */
    static void deleteLeftoverPurges(final Path directory)
    {
        int deleted = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "*" + PURGING_SUFFIX))
        {
            for (final Path file : files)
            {
                Files.deleteIfExists(file);
                deleted++;
            }
        }
        catch (final IOException ex)
        {
            throw ioError(directory, "cannot delete the rest of an interrupted purge", ex);
        }
        if (deleted > 0)
        {
            fsyncDirectory(directory);
            System.getLogger(SegmentFiles.class.getName()).log(System.Logger.Level.INFO,
                "deleted {0} segments left half deleted in {1}", deleted, directory);
        }
    }

    /**
     * Write zeros over {@code [from, to)} of a file.
     */
    static void zero(final FileChannel channel, final Path file, final long from, final long to)
    {
        final ByteBuffer zeros = ByteBuffer.allocateDirect(ZERO_CHUNK);
        try
        {
            long position = from;
            while (position < to)
            {
                zeros.clear().limit((int)Math.min(ZERO_CHUNK, to - position));
                while (zeros.hasRemaining())
                {
                    position += channel.write(zeros, position);
                }
            }
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot zero range [" + from + ", " + to + ")", ex);
        }
    }

    static void fsyncDirectory(final Path directory)
    {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ))
        {
            channel.force(true);
        }
        catch (final IOException ex)
        {
            throw ioError(directory, "cannot fsync directory", ex);
        }
    }

    static long size(final Path file)
    {
        try
        {
            return Files.size(file);
        }
        catch (final IOException ex)
        {
            throw ioError(file, "cannot read size", ex);
        }
    }

    /**
     * After a write that found no space, for the batch dropped since: the write may have put a prefix of it on disk,
     * which is zeroed, or a later, shorter batch could leave an old frame lined up after its end for recovery to
     * find. Written zeros, not a mapped read: on a full tmpfs, touching a hole through a mapping is a SIGBUS. The
     * prefix's blocks are allocated, so zeroing them needs no space; the first hole after them ends it with "no
     * space", and holes read as zeros anyway. A segment the batch went on into is deleted.
     *
     * @param segment the open segment that holds {@code from}.
     * @return the number of segments deleted (0 or 1).
     */
    static int zeroAfterFailedWrite(
        final SegmentChannel segment, final Path directory, final long from, final int length, final int segmentLength)
    {
        final long base = FrameDescriptor.segmentBase(from, segmentLength);
        final long to = Math.min(from + length, base + segmentLength);
        try
        {
            segment.zero(from - base, to - base);
        }
        catch (final ArchiveException ex)
        {
            if (!NoSpace.is(ex))
            {
                throw ex;
            }
        }
        final long[] bases = listBasePositions(directory);
        if (bases.length > 0 && bases[bases.length - 1] > base)
        {
            deleteAbove(directory, bases, base);
            return 1;
        }
        return 0;
    }

    static ArchiveException ioError(final Path file, final String what, final IOException ex)
    {
        return new ArchiveException(ArchiveException.Reason.IO_ERROR, file, -1, what + ": " + ex, ex);
    }

    static String describeBases(final long[] bases)
    {
        return bases.length <= 8 ? Arrays.toString(bases) : bases.length + " segments";
    }
}
