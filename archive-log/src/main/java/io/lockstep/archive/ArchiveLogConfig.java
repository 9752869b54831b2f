package io.lockstep.archive;

import org.agrona.BitUtil;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Settings of one log directory. The segment length, batch bound and initial position are fixed when the directory
 * is created and recorded in its descriptor; opening it later with other values is a {@code CONFIG_MISMATCH}.
 * <p>
 * The segment length must be the same on every member of a cluster: a segment ends with a padding frame, and
 * padding takes up log positions, so members with different segment lengths would disagree on positions.
 */
public final class ArchiveLogConfig
{
    /** 64 MiB: few files for a long log, and a purge frees space in useful steps. */
    public static final int DEFAULT_SEGMENT_LENGTH = 64 * 1024 * 1024;
    /** 1 MiB: enough for thousands of small messages in one write, small enough to stay in L2/L3 cache. */
    public static final int DEFAULT_MAX_BATCH_LENGTH = 1024 * 1024;
    /** Smallest segment: keeps tests able to cross many segments cheaply. */
    public static final int MIN_SEGMENT_LENGTH = 4096;
    /** Largest segment: segment offsets are ints and a segment is mapped whole by readers. */
    public static final int MAX_SEGMENT_LENGTH = 1 << 30;
    /**
     * 200 ms: under NONE, forcing the current segment this often from a background thread keeps the kernel's
     * write-back of dirty log pages steady. Without it, pages pile up and are written back in bursts, and a write()
     * that meets a burst blocks the consensus thread: measured here, p99 58 ms and max 206 ms at 10k msg/s, against
     * p99 3.7 ms and max 19 ms with it.
     */
    public static final long DEFAULT_BACKGROUND_SYNC_INTERVAL_MS = 200;
    /** Smallest batch bound: one frame header for padding plus a small frame. */
    public static final int MIN_MAX_BATCH_LENGTH = 256;

    private Path directory;
    private int segmentLength = DEFAULT_SEGMENT_LENGTH;
    private int maxBatchLength = DEFAULT_MAX_BATCH_LENGTH;
    private long initialPosition = 0;
    private DurabilityPolicy durability = DurabilityPolicy.NONE;
    private long backgroundSyncIntervalMs = DEFAULT_BACKGROUND_SYNC_INTERVAL_MS;
    private long initialPromisePosition = -1;
    private FrameHandler recoveryHandler;
    private long initialPromiseTerm = -1;
    private String inheritedPromiseLoss;
    private Path slowSyncFile;

    /**
     * @param directory the directory holding the descriptor and segment files.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig directory(final Path directory)
    {
        this.directory = directory;
        return this;
    }

    /**
     * Settings that open an existing log directory as it was created, for tools that do not know the configuration
     * it was written with.
     *
     * @param directory an existing log directory.
     * @return settings with its segment length, batch bound and initial position.
     * @throws ArchiveException if it holds no readable descriptor.
     */
    public static ArchiveLogConfig forExisting(final Path directory)
    {
        final LogDescriptorFile.Values values = LogDescriptorFile.read(directory);
        return new ArchiveLogConfig().directory(directory).segmentLength(values.segmentLength())
            .maxBatchLength(values.maxBatchLength()).initialPosition(values.initialPosition());
    }

    /**
     * A promise a new log directory inherits from the one it replaces (a log reset to a snapshot), so that frames
     * the old log may have acknowledged stay owed: see {@link ArchiveLog#promisedPosition()}.
     *
     * @param position promised position, or -1 for none.
     * @param term     term of the frame ending there.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig initialPromise(final long position, final long term)
    {
        this.initialPromisePosition = position;
        this.initialPromiseTerm = term;
        return this;
    }

    /**
     * Give every frame recovery checks when the log opens (padding frames excepted) to a handler as well, in log
     * order: a caller that needs something from every frame at start (where terms start, say) then reads the log
     * once, not twice. Only frames below the end recovery settles on are given, but a purge or reset after open can
     * still move the start or end.
     *
     * @param handler given each frame; null for none. Called on the opening thread, during the open.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig recoveryHandler(final FrameHandler handler)
    {
        this.recoveryHandler = handler;
        return this;
    }

    FrameHandler recoveryHandler()
    {
        return recoveryHandler;
    }

    /**
     * For a log that replaces another (a reset): the old log's promise had been lost ({@link PromiseLoss#read}),
     * and the new one keeps the mark until it is kept again.
     *
     * @param status how the old promise was found, or null if it was not lost.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig inheritedPromiseLoss(final String status)
    {
        this.inheritedPromiseLoss = status;
        return this;
    }

    String inheritedPromiseLoss()
    {
        return inheritedPromiseLoss;
    }

    long initialPromisePosition()
    {
        return initialPromisePosition;
    }

    long initialPromiseTerm()
    {
        return initialPromiseTerm;
    }

    /**
     * For tests only: an injected slow disk. While the file exists, each sync under {@code BATCH} first waits the
     * number of milliseconds written in it.
     *
     * @param file the file, or null (the default) for none.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig slowSyncFile(final Path file)
    {
        this.slowSyncFile = file;
        return this;
    }

    /** @return the injected slow disk's file, or null: see {@link #slowSyncFile(Path)}. */
    public Path slowSyncFile()
    {
        return slowSyncFile;
    }

    /**
     * @return the directory holding the descriptor and segment files.
     */
    public Path directory()
    {
        return directory;
    }

    /**
     * @param segmentLength length of each segment file, a power of two.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig segmentLength(final int segmentLength)
    {
        this.segmentLength = segmentLength;
        return this;
    }

    /**
     * @return length of each segment file.
     */
    public int segmentLength()
    {
        return segmentLength;
    }

    /**
     * The most bytes one flush writes. It bounds the writer's buffer, the largest frame, and the region a torn write
     * can damage, which is what recovery relies on to tell a torn tail from corruption.
     *
     * @param maxBatchLength bound on one write batch, a multiple of the frame alignment.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig maxBatchLength(final int maxBatchLength)
    {
        this.maxBatchLength = maxBatchLength;
        return this;
    }

    /**
     * @return bound on one write batch.
     */
    public int maxBatchLength()
    {
        return maxBatchLength;
    }

    /**
     * @param initialPosition position of the first frame of a new log (non-zero for a member that starts from a
     *                        snapshot), frame aligned.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig initialPosition(final long initialPosition)
    {
        this.initialPosition = initialPosition;
        return this;
    }

    /**
     * @return position of the first frame of a new log.
     */
    public long initialPosition()
    {
        return initialPosition;
    }

    /**
     * @param durability what a batch must reach before its position is reported durable.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig durability(final DurabilityPolicy durability)
    {
        this.durability = durability;
        return this;
    }

    /**
     * @return what a batch must reach before its position is reported durable.
     */
    public DurabilityPolicy durability()
    {
        return durability;
    }

    /**
     * Under {@link DurabilityPolicy#NONE}, how often a background thread forces the segment being written (0: never).
     * It changes no promise: the durable position is still what NONE promises. Unused under BATCH, which forces
     * every batch.
     *
     * @param intervalMs milliseconds between forces.
     * @return this for a fluent API.
     */
    public ArchiveLogConfig backgroundSyncIntervalMs(final long intervalMs)
    {
        this.backgroundSyncIntervalMs = intervalMs;
        return this;
    }

    /**
     * @return milliseconds between background forces under NONE (0: never).
     */
    public long backgroundSyncIntervalMs()
    {
        return backgroundSyncIntervalMs;
    }

    /**
     * @return the largest payload a single frame may carry.
     */
    public int maxPayloadLength()
    {
        // Room for the padding header that may precede the frame in the same batch.
        return maxBatchLength - 2 * FrameDescriptor.HEADER_LENGTH;
    }

    /**
     * @throws IllegalArgumentException naming the first setting that is wrong.
     */
    public void validate()
    {
        Objects.requireNonNull(directory, "directory must be set");
        Objects.requireNonNull(durability, "durability must be set");
        if (!BitUtil.isPowerOfTwo(segmentLength) || segmentLength < MIN_SEGMENT_LENGTH ||
            segmentLength > MAX_SEGMENT_LENGTH)
        {
            throw new IllegalArgumentException("segmentLength must be a power of two in [" + MIN_SEGMENT_LENGTH +
                ", " + MAX_SEGMENT_LENGTH + "]: " + segmentLength);
        }
        if (maxBatchLength < MIN_MAX_BATCH_LENGTH || maxBatchLength > segmentLength ||
            maxBatchLength % FrameDescriptor.FRAME_ALIGNMENT != 0)
        {
            throw new IllegalArgumentException("maxBatchLength must be a multiple of " +
                FrameDescriptor.FRAME_ALIGNMENT + " in [" + MIN_MAX_BATCH_LENGTH + ", segmentLength=" + segmentLength +
                "]: " + maxBatchLength);
        }
        if (backgroundSyncIntervalMs < 0)
        {
            throw new IllegalArgumentException("backgroundSyncIntervalMs must be >= 0: " + backgroundSyncIntervalMs);
        }
        if (initialPosition < 0 || !FrameDescriptor.isAligned(initialPosition))
        {
            throw new IllegalArgumentException("initialPosition must be >= 0 and a multiple of " +
                FrameDescriptor.FRAME_ALIGNMENT + ": " + initialPosition);
        }
    }

    public String toString()
    {
        return "ArchiveLogConfig{directory=" + directory + ", segmentLength=" + segmentLength + ", maxBatchLength=" +
            maxBatchLength + ", initialPosition=" + initialPosition + ", durability=" + durability + '}';
    }
}
