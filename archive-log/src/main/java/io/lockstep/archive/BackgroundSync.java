package io.lockstep.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Under {@link DurabilityPolicy#NONE}, the log's storage work that need not hold up its writer, on a thread of its own:
 * <ul>
 * <li>forces the segment being written at an interval, so the kernel writes dirty log pages back steadily instead of
 * in bursts that block the writer's write() (see {@link ArchiveLogConfig#backgroundSyncIntervalMs});</li>
 * <li>forces and closes each segment the writer has left for good ({@link #retire}): on the writer's thread that
 * fdatasync stalled the member about 10 ms at every segment rollover; {@link #awaitRetired} is how {@code sync()}
 * still makes every earlier segment durable.</li>
 * </ul>
 * It changes no durability promise. The one thread archive-log starts; it is storage I/O outside the single-threaded
 * consensus core, and the simulation's log has none.
 */
final class BackgroundSync implements AutoCloseable
{
    private final Thread thread;
    private final long intervalNs;
    private volatile FileChannel target;
    private volatile boolean running = true;
    private final ConcurrentLinkedQueue<Retired> retired = new ConcurrentLinkedQueue<>();
    private final AtomicLong retiredCount = new AtomicLong();
    private final AtomicLong settledCount = new AtomicLong();
    private volatile ArchiveException failure;

    private record Retired(FileChannel channel, Path file)
    {
    }

    private static final Retired WARM_UP = new Retired(null, null);

    BackgroundSync(final String name, final long intervalNs)
    {
        this.intervalNs = intervalNs;
        // The queue's first offer and poll link its VarHandle call sites in the interpreter, spinning method handle
        // classes: about 6 ms of the writer's thread inside the first rollover's retire (a wall-clock profile of a
        // leader at 5k msg/s). Done here, before the writer's duty cycle starts, and before the thread that polls.
        for (int i = 0; i < 3; i++)
        {
            retired.offer(WARM_UP);
        }
        while (null != retired.poll())
        {
            // Drained: the warm-up entries are never settled.
        }
        thread = new Thread(this::run, "log-background-sync-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private void run()
    {
        BackgroundPriority.lowerThisThread();
        long nextForceNs = System.nanoTime() + intervalNs;
        while (running)
        {
            settleRetired();
            if (System.nanoTime() - nextForceNs >= 0)
            {
                forceTarget();
                nextForceNs = System.nanoTime() + intervalNs;
            }
            LockSupport.parkNanos(Math.max(1, nextForceNs - System.nanoTime()));
        }
        settleRetired();
    }

    private void forceTarget()
    {
        final FileChannel channel = target;
        if (null != channel)
        {
            try
            {
                channel.force(false);
            }
            catch (final IOException | RuntimeException ex)
            {
                // Closed on a segment rollover or at shutdown; the next segment is picked up next time.
            }
        }
    }

    private void settleRetired()
    {
        Retired r;
        while (null != (r = retired.poll()))
        {
            try (FileChannel channel = r.channel())
            {
                channel.force(false);
            }
            catch (final IOException ex)
            {
                failure = SegmentFiles.ioError(r.file(), "fsync failed", ex);
            }
            settledCount.incrementAndGet();
        }
    }

    /**
     * @param channel the segment now being written, or null.
     */
    void target(final FileChannel channel)
    {
        target = channel;
    }

    /**
     * Hand over a segment the writer has left for good: it is forced and closed here, not on the writer's thread.
     */
    void retire(final FileChannel channel, final Path file)
    {
        retired.add(new Retired(channel, file));
        retiredCount.incrementAndGet();
        LockSupport.unpark(thread);
    }

    /**
     * Wait until every retired segment is forced (as {@code sync()} must), and report a force that failed.
     *
     * @throws ArchiveException naming the segment whose fdatasync failed.
     */
    void awaitRetired()
    {
        final long goal = retiredCount.get();
        while (settledCount.get() < goal)
        {
            if (!thread.isAlive())
            {
                settleRetired(); // closed: finish here
            }
            LockSupport.unpark(thread);
            LockSupport.parkNanos(50_000);
        }
        throwIfFailed();
    }

    /**
     * @throws ArchiveException if forcing a retired segment failed: its frames may not be on disk.
     */
    void throwIfFailed()
    {
        final ArchiveException f = failure;
        if (null != f)
        {
            failure = null;
            throw f;
        }
    }

    public void close()
    {
        running = false;
        target = null;
        LockSupport.unpark(thread);
        try
        {
            thread.join(1000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        settleRetired();
    }
}
