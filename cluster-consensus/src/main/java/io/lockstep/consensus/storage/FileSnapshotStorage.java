package io.lockstep.consensus.storage;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.NoSpace;
import io.lockstep.archive.RecordingLog;
import io.lockstep.archive.SnapshotFileReader;
import io.lockstep.archive.SnapshotFileWriter;
import io.lockstep.archive.SnapshotInfo;
import io.lockstep.archive.SnapshotStore;
import io.lockstep.archive.codecs.RecordingType;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Snapshots as files, through archive-log: each image becomes one snapshot in the {@link SnapshotStore} (service id 0:
 * the container's state and the service's, in one file at one position) and a record in the {@link RecordingLog},
 * added only once the file is complete and durable.
 * <p>
 * Writing happens on one background thread of this class, outside the member's duty cycle: that is what keeps the
 * services' pause down to serialising state into memory. Deleting snapshots beyond those kept also happens there.
 * The thread may wait a while before it writes ({@link HurryableDelay}: a cluster node waits a time that depends on
 * its member id, so that the members' writes of a snapshot taken at the same log position do not start together);
 * {@link #expedite()} (someone waits for the snapshot) and closing the storage end the wait and write at once.
 * The recording log is shared by that thread and the member's (which reads it to stream a snapshot, and records an
 * installed one), under its monitor: a few accesses per snapshot, never on the per-message path.
 */
public final class FileSnapshotStorage implements SnapshotStorage
{
    private static final System.Logger LOGGER = System.getLogger(FileSnapshotStorage.class.getName());
    private static final int SERVICE_ID = 0;
    private static final String INSTALL_FILE = "install.tmp";

    private final Path directory;
    private final SnapshotStore store;
    private final RecordingLog recordingLog;
    private final ExecutorService writer;
    private final long writeDelayNs;
    private final HurryableDelay writeWait = new HurryableDelay();
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(256 * 1024);
    private final WriteTask writeTask = new WriteTask();
    private volatile boolean writing;
    private volatile RuntimeException writeError;
    /** Null, or why the last snapshot could not be written (a full disk): the next one is tried as usual. */
    private volatile String writeProblem;
    private volatile long durablePosition = -1;
    private volatile long durableTerm;
    private volatile long durableLength;
    private volatile long lastWriteNs;
    private FileChannel streamChannel;
    private long streamPosition = -1;
    private FileChannel installChannel;
    private long installPosition;
    private long installTerm;
    private long installLength;
    private long installed;

    /**
     * @param directory the member's data directory: snapshots go in {@code snapshots/}, the recording log beside.
     */
    public FileSnapshotStorage(final Path directory)
    {
        this(directory, 0);
    }

    /**
     * @param directory    the member's data directory: snapshots go in {@code snapshots/}, the recording log beside.
     * @param writeDelayNs how long the writer thread waits before it writes each snapshot (0: at once); see the class
     *                     comment.
     */
    public FileSnapshotStorage(final Path directory, final long writeDelayNs)
    {
        if (writeDelayNs < 0)
        {
            throw new IllegalArgumentException("snapshot write delay must not be negative: " + writeDelayNs);
        }
        this.writeDelayNs = writeDelayNs;
        this.directory = directory;
        this.store = SnapshotStore.open(directory.resolve("snapshots"));
        this.recordingLog = RecordingLog.open(directory);
        removeUnrecorded();
        final RecordingLog.Entry latest = recordingLog.latestSnapshot(SERVICE_ID);
        if (null != latest)
        {
            setDurable(latest.position(), latest.term(), latest.location());
        }
        writer = StorageThreads.started("lockstep-snapshot-writer");
    }

    public boolean isWriting()
    {
        checkWriteError();
        return writing;
    }

    public void write(final SnapshotImage image)
    {
        checkWriteError();
        if (writing)
        {
            throw new IllegalStateException("a snapshot write is already under way");
        }
        writeWait.hurry(false); // no write under way: a hurry asked for the last one is not for this one
        writing = true;
        writeTask.image = image;
        writer.execute(writeTask);
    }

    public void expedite()
    {
        if (writing)
        {
            writeWait.hurry(true);
        }
    }

    public long durablePosition()
    {
        return durablePosition;
    }

    public long durableTerm()
    {
        return durableTerm;
    }

    public long durableLength()
    {
        return durableLength;
    }

    /**
     * @return how long the last background write took, in nanoseconds.
     */
    public long lastWriteNs()
    {
        return lastWriteNs;
    }

    public Loaded loadLatest()
    {
        final List<RecordingLog.Entry> snapshots = snapshotRecords();
        for (int i = snapshots.size() - 1; i >= 0; i--)
        {
            final RecordingLog.Entry entry = snapshots.get(i);
            try
            {
                final SnapshotImage image = readImage(entry.location());
                setDurable(entry.position(), entry.term(), entry.location());
                return new Loaded(image, entry.location());
            }
            catch (final ArchiveException ex)
            {
                LOGGER.log(System.Logger.Level.ERROR, "snapshot {0} at position {1} is unusable ({2}); it is set " +
                    "aside as {0}.damaged and the one before it is tried", entry.location(), entry.position(),
                    ex.getMessage());
                setAside(entry.location());
            }
        }
        durablePosition = -1;
        return null;
    }

    public int read(
        final long logPosition, final long offset, final MutableDirectBuffer dst, final int dstOffset,
            final int maxLength)
    {
        try
        {
            if (streamPosition != logPosition)
            {
                closeStream();
                final String location = locationOf(logPosition);
                if (null == location)
                {
                    return -1;
                }
                streamChannel = FileChannel.open(store.directory().resolve(location), StandardOpenOption.READ);
                streamPosition = logPosition;
            }
            readBuffer.clear().limit(Math.min(maxLength, readBuffer.capacity()));
            final int read = streamChannel.read(readBuffer, offset);
            if (read <= 0)
            {
                return 0;
            }
            dst.putBytes(dstOffset, readBuffer.flip(), 0, read);
            return read;
        }
        catch (final IOException ex)
        {
            // Deleted by retention while being streamed: the follower is sent the newer one.
            closeStream();
            return -1;
        }
    }

    public void beginInstall(final long logPosition, final long term, final long totalLength)
    {
        abortInstall();
        try
        {
            installChannel = FileChannel.open(store.directory().resolve(INSTALL_FILE), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create " + store.directory().resolve(INSTALL_FILE), ex);
        }
        installPosition = logPosition;
        installTerm = term;
        installLength = totalLength;
        installed = 0;
    }

    public void installChunk(final DirectBuffer buffer, final int offset, final int length)
    {
        final ByteBuffer bytes = ByteBuffer.allocate(length);
        buffer.getBytes(offset, bytes, length);
        bytes.flip();
        try
        {
            while (bytes.hasRemaining())
            {
                installChannel.write(bytes);
            }
        }
        catch (final IOException ex)
        {
            // As for the log: no space is waited out; any other write error may have lost what it covered, and is
            // fatal.
            if (NoSpace.is(ex))
            {
                throw new ArchiveException(ArchiveException.Reason.IO_ERROR, store.directory().resolve(INSTALL_FILE),
                    installed, "no space for the snapshot being received: " + ex.getMessage(), ex);
            }
            throw new IllegalStateException("cannot write " + store.directory().resolve(INSTALL_FILE), ex);
        }
        installed += length;
    }

    public long usableSpace()
    {
        try
        {
            // One statvfs. A full disk is 0, which refuses a snapshot; only a store that cannot be asked is unknown.
            return Files.getFileStore(store.directory()).getUsableSpace();
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }

    /**
     * Half the heap, and at most one array: a snapshot is read whole into one image to be checked and loaded, and
     * the member's own images and the service's state share the heap with it.
     */
    public long maxImageBytes()
    {
        return Math.min(Runtime.getRuntime().maxMemory() / 2, SnapshotImage.MAX_LENGTH);
    }

    public Loaded completeInstall()
    {
        awaitWrite();
        final Path tmp = store.directory().resolve(INSTALL_FILE);
        final String location = "snapshot-" + installPosition + "-" + SERVICE_ID + "-" + installTerm + ".snap";
        try
        {
            if (installed != installLength)
            {
                throw new ArchiveException(ArchiveException.Reason.CORRUPT_SNAPSHOT, tmp, installed, "installed " +
                    installed + " of " + installLength + " bytes");
            }
            if (installPosition <= durablePosition)
            {
                // Retention deletes by file name and a restart loads the newest record: a second record of one
                // position, or one out of order, would lose a snapshot.
                throw new IllegalStateException("snapshot installed at " + installPosition + ", at or below the " +
                    "newest recorded at " + durablePosition + ": snapshots are recorded in log order only");
            }
            installChannel.force(true);
            installChannel.close();
            installChannel = null;
            final SnapshotImage image = readImage(INSTALL_FILE);
            if (image.logPosition() != installPosition || image.term() != installTerm)
            {
                throw new ArchiveException(ArchiveException.Reason.CORRUPT_SNAPSHOT, tmp, 0, "installed snapshot is " +
                    "for position " + image.logPosition() + " term " + image.term() + ", expected " +
                    installPosition + " term " + installTerm);
            }
            Files.move(tmp, store.directory().resolve(location), StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(store.directory());
            synchronized (recordingLog)
            {
                recordingLog.appendSnapshot(installTerm, installPosition, SERVICE_ID, image.timestamp(), location);
            }
            setDurable(installPosition, installTerm, location);
            return new Loaded(image, location + " (installed from the leader)");
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot complete installed snapshot " + location, ex);
        }
    }

    /**
     * Decides at once which snapshots go (so the caller can purge the log below the oldest kept), and deletes them
     * on the writer thread: the recording-log rewrite and file deletions never stall the member's duty cycle.
     */
    public long retain(final int keep)
    {
        if (keep < 1)
        {
            throw new IllegalArgumentException("keep at least one snapshot: " + keep);
        }
        checkWriteError();
        final List<RecordingLog.Entry> snapshots = snapshotRecords();
        final int drop = Math.max(0, snapshots.size() - keep);
        if (drop > 0)
        {
            final List<String> locations = new ArrayList<>();
            for (int i = 0; i < drop; i++)
            {
                locations.add(snapshots.get(i).location());
                if (snapshots.get(i).position() == streamPosition)
                {
                    closeStream();
                }
            }
            writer.execute(new DeleteTask(locations));
        }
        return snapshots.isEmpty() ? -1 : snapshots.get(drop).position();
    }

    @Override
    public String writeProblem()
    {
        return writeProblem;
    }

    public void close()
    {
        writeWait.hurry(true);
        writer.shutdown();
        try
        {
            writer.awaitTermination(1, TimeUnit.MINUTES);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        closeStream();
        abortInstall();
    }

    private SnapshotImage readImage(final String location)
    {
        try (SnapshotFileReader reader = store.openReader(location))
        {
            final SnapshotInfo info = reader.info();
            final SnapshotImage image = new SnapshotImage(info.logPosition(), info.term(), info.timestamp(),
                (int)Math.min(Integer.MAX_VALUE - 64, Math.max(64, SnapshotStoreSize.of(store, location))));
            while (!reader.isDone())
            {
                reader.poll(image::append, 64);
            }
            return image;
        }
    }

    /**
     * A damaged snapshot leaves the recording log (so retention no longer counts it as one of those kept) but its
     * file stays, renamed, for whoever investigates.
     */
    private void setAside(final String location)
    {
        synchronized (recordingLog)
        {
            recordingLog.removeSnapshot(location);
        }
        try
        {
            Files.move(store.directory().resolve(location), store.directory().resolve(location + ".damaged"),
                StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot rename damaged snapshot {0}: {1}", location,
                ex.getMessage());
        }
    }

    private List<RecordingLog.Entry> snapshotRecords()
    {
        final List<RecordingLog.Entry> result = new ArrayList<>();
        synchronized (recordingLog)
        {
            for (final RecordingLog.Entry entry : recordingLog.entries())
            {
                if (RecordingType.SNAPSHOT == entry.type() && SERVICE_ID == entry.serviceId())
                {
                    result.add(entry);
                }
            }
        }
        result.sort((a, b) -> Long.compare(a.position(), b.position()));
        return result;
    }

    private String locationOf(final long logPosition)
    {
        for (final RecordingLog.Entry entry : snapshotRecords())
        {
            if (entry.position() == logPosition)
            {
                return entry.location();
            }
        }
        return null;
    }

    private void setDurable(final long position, final long term, final String location)
    {
        durableLength = SnapshotStoreSize.of(store, location);
        durableTerm = term;
        durablePosition = position;
    }

    /** Snapshot files left by a crash before they were recorded, and a half-received install, are removed. */
    private void removeUnrecorded()
    {
        try (Stream<Path> files = Files.list(store.directory()))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                final String name = file.getFileName().toString();
                if (name.endsWith(".tmp") || (name.endsWith(".snap") && !isRecorded(name)))
                {
                    LOGGER.log(System.Logger.Level.INFO, "removing unrecorded snapshot file {0}", file);
                    Files.deleteIfExists(file);
                }
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot list " + store.directory(), ex);
        }
    }

    private boolean isRecorded(final String location)
    {
        for (final RecordingLog.Entry entry : recordingLog.entries())
        {
            if (location.equals(entry.location()))
            {
                return true;
            }
        }
        return false;
    }

    private void awaitWrite()
    {
        expedite(); // this thread waits: the write must not
        while (writing)
        {
            Thread.onSpinWait();
        }
        checkWriteError();
    }

    private void checkWriteError()
    {
        final RuntimeException error = writeError;
        if (null != error)
        {
            throw new IllegalStateException("snapshot write failed in " + directory + ": " + error.getMessage(), error);
        }
    }

    private void closeStream()
    {
        if (null != streamChannel)
        {
            try
            {
                streamChannel.close();
            }
            catch (final IOException ignore)
            {
                // Read-only channel: nothing to lose.
            }
            streamChannel = null;
        }
        streamPosition = -1;
    }

    public void abortInstall()
    {
        try
        {
            if (null != installChannel)
            {
                installChannel.close();
                installChannel = null;
            }
            // Also after a completed install failed its checks (the channel closed then): its file would otherwise
            // hold the disk until a restart.
            Files.deleteIfExists(store.directory().resolve(INSTALL_FILE));
        }
        catch (final IOException ex)
        {
            installChannel = null;
            LOGGER.log(System.Logger.Level.WARNING, "cannot remove abandoned install: {0}", ex.getMessage());
        }
    }

    private static void fsyncDirectory(final Path dir) throws IOException
    {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ))
        {
            channel.force(true);
        }
    }

    /**
     * The one write under way, made once and reused (one write at a time, handed over through the executor's queue):
     * a lambda here would be linked inside the first snapshot, on the member's thread.
     */
    private final class WriteTask implements Runnable, SnapshotReader.FragmentHandler
    {
        private SnapshotImage image;
        private SnapshotFileWriter out;

        public void run()
        {
            // Timed here, on the writer thread: the member's thread reads no clock of its own. The task starts as
            // it is handed over, since one write at a time is allowed.
            writeWait.awaitUntil(System.nanoTime() + writeDelayNs);
            final long startNs = System.nanoTime();
            try (SnapshotFileWriter out = store.newSnapshot(SERVICE_ID, image.term(), image.logPosition(),
                image.timestamp()))
            {
                this.out = out;
                image.forEachFragment(this);
                final SnapshotInfo info = out.complete();
                synchronized (recordingLog)
                {
                    recordingLog.appendSnapshot(image.term(), image.logPosition(), SERVICE_ID, image.timestamp(),
                        info.location());
                }
                setDurable(image.logPosition(), image.term(), info.location());
                writeProblem = null;
                lastWriteNs = System.nanoTime() - startNs;
                LOGGER.log(System.Logger.Level.INFO, "snapshot at {0} durable: {1} bytes written in {2} ms",
                    image.logPosition(), durableLength, TimeUnit.NANOSECONDS.toMillis(lastWriteNs));
            }
            catch (final RuntimeException ex)
            {
                if (NoSpace.is(ex))
                {
                    // The partial file is gone (the writer deletes it on close); the log keeps what the snapshot
                    // would have covered, and the next snapshot is tried at the next interval.
                    writeProblem = "no space left for the snapshot at position " + image.logPosition() + " in " +
                        directory;
                    LOGGER.log(System.Logger.Level.WARNING, "{0}: the log is kept until a snapshot is written",
                        writeProblem);
                }
                else
                {
                    writeError = ex;
                }
            }
            finally
            {
                out = null;
                image = null;
                writing = false;
            }
        }

        public void onFragment(final DirectBuffer buffer, final int offset, final int length)
        {
            out.append(buffer, offset, length);
        }
    }

    /** Deletes the snapshots retention dropped; a named class for the reason {@link WriteTask} is one. */
    private final class DeleteTask implements Runnable
    {
        private final List<String> locations;

        DeleteTask(final List<String> locations)
        {
            this.locations = locations;
        }

        public void run()
        {
            try
            {
                for (final String location : locations)
                {
                    synchronized (recordingLog)
                    {
                        recordingLog.removeSnapshot(location);
                    }
                    store.delete(location);
                }
            }
            catch (final RuntimeException ex)
            {
                writeError = ex;
            }
        }
    }

    private static final class SnapshotStoreSize
    {
        static long of(final SnapshotStore store, final String location)
        {
            try
            {
                return Files.size(store.directory().resolve(location));
            }
            catch (final IOException ex)
            {
                return 0;
            }
        }
    }
}
