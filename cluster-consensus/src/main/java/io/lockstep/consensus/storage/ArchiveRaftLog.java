package io.lockstep.consensus.storage;

import io.lockstep.archive.ArchiveLog;
import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.BlockHandler;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.archive.LogReader;
import io.lockstep.archive.PromiseLoss;
import io.lockstep.consensus.BlockSource;
import io.lockstep.consensus.RaftLog;
import org.agrona.DirectBuffer;
import org.agrona.collections.LongArrayList;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The consensus agent's log over archive-log: one writer, and one reader that the leader moves to wherever a
 * follower needs bytes from. Beside the log directory, file {@code <dir>.base} holds the term where a purged or reset
 * log starts ({@link LogBaseFile}).
 * <p>
 * Crash safety of the two operations that remove log: a purge saves the base first and then deletes segments, and a
 * reopened log finishes a purge the base is ahead of. Both steps of a purge run on a thread of this class: the log's
 * start moves at once (readers are refused below it), but an fsync and unlinking whole segments can cost the
 * member's thread over a hundred milliseconds. A
 * reset renames the log directory away (one atomic step), saves the base, and creates the new log there; a
 * reopened log with no directory starts at the saved base, and a leftover renamed directory is deleted.
 * <p>
 * The purge thread waits a configured delay before it deletes, staggered by member id: every member snapshots at
 * the same log position, and three members' deletes landing with their snapshots doubled the p99 on two cores
 * (figures in benchmarks/results/history.md). A delay only keeps files longer: the start has moved already, and the
 * base is saved before the delete, as without it. A reset or close does not wait out the delay.
 */
public final class ArchiveRaftLog implements RaftLog
{
    private static final System.Logger LOGGER = System.getLogger(ArchiveRaftLog.class.getName());

    private final ArchiveLogConfig config;
    private final LogBaseFile base;
    private LongConsumer flushTimes;
    /** The lowest position a reader found a damaged frame at, until repaired; -1 for none. */
    private final AtomicLong damagedAt = new AtomicLong(-1);
    private volatile String damage;
    private long reportedSyncPosition = -1;
    private Runnable onDurable;
    private Consumer<String> writeProblems;
    private boolean problemReported;
    private final ExecutorService purger;
    /**
     * Pause of the purge thread after each 1 MiB it cuts from a segment it deletes (see ArchiveLog), so that the cuts
     * leave the member threads a CPU on a small machine (6 ms rather than 1 ms: figures in
     * benchmarks/results/history.md). A 64 MiB segment still goes in about 0.4 s, faster than the log grows.
     */
    private static final long PURGE_STEP_PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(6);
    private final long purgeDelayNs;
    /** Hurried while the member's thread waits for purges (reset, close): delete now, do not wait out the delay. */
    private final HurryableDelay purgeWait = new HurryableDelay();
    private ArchiveLog log;
    private LogReader reader;
    /** What recovery noted as the log opened, for the member's pass at start (once; null after). */
    private RecoveredFrames recovered = new RecoveredFrames();
    /** Where the log starts and the term there, as of the last purge or reset (saved to the base file after). */
    private volatile RuntimeException purgeError;
    private long basePosition;
    private long baseTerm;

    /**
     * Open (or create) the log a configuration names.
     *
     * @param config the log's settings; this takes it over (a reset changes its initial position).
     */
    public ArchiveRaftLog(final ArchiveLogConfig config)
    {
        this(config, 0);
    }

    /**
     * Open (or create) the log a configuration names, deleting purged segments some time after each purge.
     *
     * @param config       the log's settings; this takes it over (a reset changes its initial position).
     * @param purgeDelayNs how long after a purge its segments are deleted (0: at once); see the class comment.
     */
    public ArchiveRaftLog(final ArchiveLogConfig config, final long purgeDelayNs)
    {
        if (purgeDelayNs < 0)
        {
            throw new IllegalArgumentException("purge delay must not be negative: " + purgeDelayNs);
        }
        this.purgeDelayNs = purgeDelayNs;
        this.config = config;
        final Path directory = config.directory();
        this.base = new LogBaseFile(directory.resolveSibling(directory.getFileName() + ".base"));
        if (!Files.exists(directory) || Files.isDirectory(discardedDirectory()))
        {
            config.initialPosition(base.position());
            // A reset that crashed after moving the old log aside, before or while the new one was made: what the
            // old log promised, and a promise it had lost, are still owed.
            inheritPromise(discardedDirectory());
        }
        config.recoveryHandler(recovered);
        try
        {
            this.log = ArchiveLog.open(config);
        }
        finally
        {
            config.recoveryHandler(null);
            config.inheritedPromiseLoss(null); // for this log only: the config outlives it
        }
        deleteTree(discardedDirectory()); // only now that the new log holds what the old one owed
        recovered.opened(log.startPosition(), log.pendingPosition());
        if (base.position() > log.startPosition())
        {
            LOGGER.log(System.Logger.Level.INFO, "finishing an interrupted purge of {0} to {1}", directory,
                base.position());
            if (log.purge(base.position()) != base.position())
            {
                throw new IllegalStateException(base + " says the log starts at " + base.position() +
                    " but " + directory + " starts at " + log.startPosition());
            }
        }
        if (log.startPosition() > 0 && log.startPosition() != base.position())
        {
            throw new IllegalStateException(directory + " starts at " + log.startPosition() + " but " +
                directory.getFileName() + ".base names " + base.position() + ": the term there is unknown");
        }
        this.reader = log.newReader(log.startPosition()).stopAtDamage();
        this.basePosition = base.position();
        this.baseTerm = base.term();
        // Last: a log that failed to open leaves no idle thread behind.
        this.purger = StorageThreads.started("lockstep-log-purge");
    }

    private void inheritPromise(final Path oldLog)
    {
        if (Files.isDirectory(oldLog))
        {
            final ArchiveLog.Promise promise = ArchiveLog.readPromise(oldLog);
            config.initialPromise(promise.position(), promise.term()).inheritedPromiseLoss(PromiseLoss.read(oldLog));
        }
    }

    public long startPosition()
    {
        return log.startPosition();
    }

    public long promisedPosition()
    {
        return log.promisedPosition();
    }

    public long promisedTerm()
    {
        return log.promisedTerm();
    }

    public long startTerm()
    {
        return log.startPosition() == basePosition ? baseTerm : 0;
    }

    public long purge(final long position, final LongUnaryOperator termAt)
    {
        recovered = null; // the notes describe the log as it opened
        final RuntimeException error = purgeError;
        if (null != error)
        {
            throw new IllegalStateException("an earlier purge of " + config.directory() + " failed: " +
                error.getMessage(), error);
        }
        final long segment = log.segmentLength();
        final long target = Math.min(position / segment, (log.appendedPosition() - 1) / segment) * segment;
        if (target <= log.startPosition())
        {
            return log.startPosition();
        }
        final long term = termAt.applyAsLong(target);
        final long start = log.advanceStart(target);
        if (start != target)
        {
            throw new IllegalStateException("purge of " + config.directory() + " reached " + start + ", not " + target);
        }
        basePosition = target;
        baseTerm = term;
        if (reader.position() < start)
        {
            reader.close();
            reader = log.newReader(start).stopAtDamage();
        }
        purger.execute(new PurgeTask(log, target, term));
        return start;
    }

    /** A named class, not a lambda: a lambda would be linked at the first purge, on the member's thread. */
    private final class PurgeTask implements Runnable
    {
        private final ArchiveLog purged;
        private final long target;
        private final long term;

        PurgeTask(final ArchiveLog purged, final long target, final long term)
        {
            this.purged = purged;
            this.target = target;
            this.term = term;
        }

        public void run()
        {
            try
            {
                // Timed here, on the purge thread, not on the member's (which reads no clock of its own). The
                // task starts as it is handed over unless an earlier purge is still running.
                purgeWait.awaitUntil(System.nanoTime() + purgeDelayNs);
                base.save(target, term);
                // Not below the start, which a later purge may have moved past the base just saved. A step at a
                // time, unless a reset or close is waiting for it.
                purged.deleteSegmentsBelow(target, purgeWait.hurried() ? 0 : PURGE_STEP_PAUSE_NS);
            }
            catch (final RuntimeException ex)
            {
                purgeError = ex;
            }
        }
    }

    public void reset(final long position, final long term)
    {
        damageRepaired(0); // the whole log goes, and any damaged frame in it
        recovered = null;
        awaitPurges();
        log.flush();
        // Frames the old log may have acknowledged stay owed in the new one, until the cluster sends them again.
        config.initialPromise(log.promisedPosition(), log.promisedTerm()).inheritedPromiseLoss(log.promiseLost());
        reader.close();
        log.close();
        final Path directory = config.directory();
        try
        {
            Files.move(directory, discardedDirectory(), StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot move " + directory + " aside to reset it", ex);
        }
        base.save(position, term);
        basePosition = position;
        baseTerm = term;
        config.initialPosition(position);
        log = ArchiveLog.open(config);
        config.inheritedPromiseLoss(null);
        if (null != onDurable)
        {
            log.onDurable(onDurable); // the new log's sync thread wakes the member's thread as the old one did
        }
        reader = log.newReader(position).stopAtDamage();
        deleteTree(discardedDirectory());
        LOGGER.log(System.Logger.Level.INFO, "log {0} reset to start at {1} (term {2})", directory, position, term);
    }

    private void awaitPurges()
    {
        purgeWait.hurry(true);
        try
        {
            awaitPurgeThread(TimeUnit.MINUTES.toMillis(1));
        }
        finally
        {
            purgeWait.hurry(false);
        }
    }

    /**
     * Wait until the purge thread has finished every purge handed to it so far, delays included (package-private
     * for tests: a reset or close hurries the purges first).
     */
    void awaitPurgeThread(final long timeoutMs)
    {
        try
        {
            purger.submit(() -> { }).get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for a purge of " + config.directory());
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            throw new IllegalStateException("purge of " + config.directory() + " failed or hung: " + ex, ex);
        }
    }

    private Path discardedDirectory()
    {
        return config.directory().resolveSibling(config.directory().getFileName() + ".discarded");
    }

    private static void deleteTree(final Path dir)
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : (Iterable<Path>)files.sorted(Comparator.reverseOrder())::iterator)
            {
                Files.delete(p);
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot delete " + dir, ex);
        }
    }

    /**
     * @return null, or how the log's promise file was found when it should have held a promise, at this open or an
     * earlier one, until kept again (see {@link ArchiveLog#promiseLost()}).
     */
    @Override
    public String promiseLost()
    {
        return log.promiseLost();
    }

    /**
     * See {@link ArchiveLog#promiseKeptAgain()}.
     */
    @Override
    public void promiseKeptAgain()
    {
        log.promiseKeptAgain();
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

    public long append(final long term, final int frameType, final DirectBuffer buffer, final int offset,
        final int length)
    {
        return log.append(term, frameType, buffer, offset, length);
    }

    public long appendFrames(final DirectBuffer buffer, final int offset, final int length)
    {
        return log.appendFrames(buffer, offset, length);
    }

    /**
     * @param listener told how long syncs of the log took under {@code batch} durability, in ns (for the metrics),
     *                 on this thread: the sync runs on the log's sync thread, and each flush reports the last one it
     *                 finished since the flush before (a sample when several finish between two flushes); null for
     *                 none.
     */
    public void flushTimes(final LongConsumer listener)
    {
        this.flushTimes = null == listener || DurabilityPolicy.BATCH != config.durability() ? null : listener;
    }

    /**
     * @param listener run on the log's sync thread each time the durable position rises under {@code batch}
     *                 durability: wakes the member's thread from its idle wait, so that acknowledgements and commits
     *                 follow the disk at once.
     */
    public void onDurable(final Runnable listener)
    {
        this.onDurable = listener;
        log.onDurable(listener);
    }

    public long flush()
    {
        final long durable = log.flush();
        if (null != flushTimes && durable != reportedSyncPosition)
        {
            reportedSyncPosition = durable;
            final long syncNs = log.lastSyncNs();
            if (syncNs >= 0)
            {
                flushTimes.accept(syncNs);
            }
        }
        noticeWriteProblem();
        return durable;
    }

    /** Tell the listener when the log finds it cannot write, and when it can again. */
    private void noticeWriteProblem()
    {
        final String problem = log.writeProblem();
        if ((null != problem) != problemReported && null != writeProblems)
        {
            problemReported = null != problem;
            writeProblems.accept(problem);
        }
    }

    /**
     * @param listener told, on the writing thread, when the log finds it cannot write (the problem) and when it
     *                 writes again (null): for the member's error log, metrics and readiness.
     */
    public void writeProblems(final Consumer<String> listener)
    {
        this.writeProblems = listener;
    }

    public String writeProblem()
    {
        noticeWriteProblem();
        return log.writeProblem();
    }

    public long discardUnwritten()
    {
        return log.discardUnwritten();
    }

    public void truncate(final long position)
    {
        recovered = null; // the notes describe the log as it opened
        log.truncate(position);
        damageRepaired(position); // a damaged frame found at or past the cut is gone with it
    }

    public int readBlock(final long position, final long limitPosition, final int maxBytes, final BlockHandler handler)
    {
        reader.seek(position);
        final int bytes = reader.readBlock(handler, limitPosition, maxBytes);
        noticeDamage(reader);
        return bytes;
    }

    public BlockSource newBlockSource()
    {
        return new CommittedReader(log.newReader(log.startPosition()).stopAtDamage());
    }

    /**
     * A reader that met a damaged frame stops before it (it reads nothing more until the frame is fetched again) and
     * says where here, for the member's thread to repair ({@link #damagedAt()}): any reader, on any thread.
     */
    private void noticeDamage(final LogReader from)
    {
        final long at = from.damagedAt();
        if (at >= 0 && at < log.publishedPosition())
        {
            long seen = damagedAt.get();
            while (seen < 0 || at < seen)
            {
                if (damagedAt.compareAndSet(seen, at))
                {
                    damage = from.damage(); // the text of the frame that is now the lowest found
                    break;
                }
                seen = damagedAt.get();
            }
        }
    }

    public void lowerPromise(final long position, final long term)
    {
        log.lowerPromise(position, term);
    }

    public long damagedAt()
    {
        return damagedAt.get();
    }

    public String damage()
    {
        return damage;
    }

    public void damageRepaired(final long position)
    {
        long seen = damagedAt.get();
        while (seen >= position && !damagedAt.compareAndSet(seen, -1))
        {
            seen = damagedAt.get();
        }
    }

    /** A reader of its own, for the service thread: {@link LogReader}s run beside the writer on any thread. */
    private final class CommittedReader implements BlockSource
    {
        private final LogReader reader;

        CommittedReader(final LogReader reader)
        {
            this.reader = reader;
        }

        public int readBlock(final long position, final long limitPosition, final int maxBytes,
            final BlockHandler handler)
        {
            reader.seek(position);
            final int bytes = reader.readBlock(handler, limitPosition, maxBytes);
            noticeDamage(reader);
            return bytes;
        }

        public void close()
        {
            reader.close();
        }
    }

    @Override
    public void scanAtOpen(final FrameVisitor visitor)
    {
        final LongArrayList frames = null == recovered ? null : recovered.framesToRead(this);
        recovered = null; // once: what it noted describes the log as it opened
        if (null == frames)
        {
            scan(visitor);
            return;
        }
        try (LogReader one = log.newReader(log.startPosition()))
        {
            final long[] wanted = new long[1];
            final BlockHandler firstFrame = (buffer, offset, length, startPosition, endPosition) ->
            {
                if (startPosition == wanted[0])
                {
                    visitor.onFrame(startPosition, buffer.getLong(offset + TERM_OFFSET, LITTLE_ENDIAN),
                        buffer.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN), buffer, offset);
                }
            };
            for (int i = 0; i < frames.size(); i++)
            {
                wanted[0] = frames.getLong(i);
                one.seek(wanted[0]);
                one.readBlock(firstFrame, Long.MAX_VALUE, 1);
            }
        }
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
                    visitor.onFrame(position, buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN), type, buffer, o);
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
        purgeWait.hurry(true);
        purger.shutdown();
        try
        {
            purger.awaitTermination(1, TimeUnit.MINUTES);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        reader.close();
        log.close();
    }
}
