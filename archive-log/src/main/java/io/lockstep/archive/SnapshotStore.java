package io.lockstep.archive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Snapshots as files of checksummed frames: a header frame, fragment frames, and a trailer frame. A snapshot is
 * written under a temporary name and renamed into place only once complete and durable, so {@link #list()} never
 * shows a partial one. Reading checks every frame, and the trailer, as it goes.
 */
public final class SnapshotStore
{
    /** Default bound on one fragment: large enough for bulk state, small enough to buffer. */
    public static final int DEFAULT_MAX_FRAGMENT_LENGTH = 1024 * 1024 - 2 * FrameDescriptor.HEADER_LENGTH;

    private static final Pattern NAME = Pattern.compile("snapshot-(\\d+)-(\\d+)-(\\d+)\\.snap");
    static final String TMP_SUFFIX = ".tmp";

    private final Path directory;
    private final int maxFragmentLength;

    private SnapshotStore(final Path directory, final int maxFragmentLength)
    {
        this.directory = directory;
        this.maxFragmentLength = maxFragmentLength;
    }

    /**
     * @param directory where snapshots are kept; created if absent.
     * @return the store, with the default fragment bound.
     */
    public static SnapshotStore open(final Path directory)
    {
        return open(directory, DEFAULT_MAX_FRAGMENT_LENGTH);
    }

    /**
     * @param directory         where snapshots are kept; created if absent.
     * @param maxFragmentLength bound on one fragment's payload.
     * @return the store.
     */
    public static SnapshotStore open(final Path directory, final int maxFragmentLength)
    {
        if (maxFragmentLength < 64)
        {
            throw new IllegalArgumentException("maxFragmentLength too small: " + maxFragmentLength);
        }
        try
        {
            Files.createDirectories(directory);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(directory, "cannot create snapshot directory", ex);
        }
        return new SnapshotStore(directory, maxFragmentLength);
    }

    /**
     * Start writing a snapshot. Nothing is visible until {@link SnapshotFileWriter#complete()}.
     *
     * @param serviceId   service the snapshot belongs to (non-negative).
     * @param term        term at the log position.
     * @param logPosition log position the snapshot covers.
     * @param timestamp   log time at the snapshot.
     * @return the writer.
     */
    public SnapshotFileWriter newSnapshot(final int serviceId, final long term, final long logPosition,
        final long timestamp)
    {
        if (serviceId < 0 || term < 0 || logPosition < 0)
        {
            throw new IllegalArgumentException("serviceId, term and logPosition must be >= 0");
        }
        final String location = "snapshot-" + logPosition + "-" + serviceId + "-" + term + ".snap";
        return new SnapshotFileWriter(directory, location, maxFragmentLength, serviceId, term, logPosition, timestamp);
    }

    /**
     * @return complete snapshots, by log position then service id.
     */
    public List<SnapshotInfo> list()
    {
        final List<SnapshotInfo> result = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory))
        {
            files.forEach(path ->
            {
                final Matcher m = NAME.matcher(path.getFileName().toString());
                if (m.matches())
                {
                    result.add(new SnapshotInfo(path.getFileName().toString(), Integer.parseInt(m.group(2)),
                        Long.parseLong(m.group(3)), Long.parseLong(m.group(1)), -1, SegmentFiles.size(path)));
                }
            });
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(directory, "cannot list snapshots", ex);
        }
        result.sort(Comparator.comparingLong(SnapshotInfo::logPosition).thenComparingInt(SnapshotInfo::serviceId));
        return result;
    }

    /**
     * @param location name of a complete snapshot.
     * @return a reader that checks every frame as it reads.
     * @throws ArchiveException with {@code CORRUPT_SNAPSHOT} if the header is damaged.
     */
    public SnapshotFileReader openReader(final String location)
    {
        return new SnapshotFileReader(directory.resolve(location), maxFragmentLength);
    }

    /**
     * Read a whole snapshot and check every frame and the trailer.
     *
     * @param location name of a complete snapshot.
     * @return the snapshot's description.
     * @throws ArchiveException with {@code CORRUPT_SNAPSHOT} naming the file and offset of the first damage.
     */
    public SnapshotInfo verify(final String location)
    {
        try (SnapshotFileReader reader = openReader(location))
        {
            while (!reader.isDone())
            {
                reader.poll((buffer, offset, length) -> {}, Integer.MAX_VALUE);
            }
            return reader.info();
        }
    }

    /**
     * @param location name of a snapshot to remove.
     */
    public void delete(final String location)
    {
        try
        {
            Files.deleteIfExists(directory.resolve(location));
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(directory.resolve(location), "cannot delete snapshot", ex);
        }
    }

    /**
     * @return the directory the snapshots are kept in.
     */
    public Path directory()
    {
        return directory;
    }
}
