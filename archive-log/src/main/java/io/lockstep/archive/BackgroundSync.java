package io.lockstep.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.concurrent.locks.LockSupport;

/**
 * Under {@link DurabilityPolicy#NONE}, forces the segment being written at an interval from its own thread, so the
 * kernel writes dirty log pages back steadily instead of in bursts that block the writer's write() (see
 * {@link ArchiveLogConfig#backgroundSyncIntervalMs}). It changes no durability promise. The one thread archive-log
 * starts; it is storage I/O outside the single-threaded consensus core, and the simulation's log has none.
 */
final class BackgroundSync implements AutoCloseable
{
    private final Thread thread;
    private volatile FileChannel target;
    private volatile boolean running = true;

    BackgroundSync(final String name, final long intervalNs)
    {
        thread = new Thread(() ->
        {
            while (running)
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
                LockSupport.parkNanos(intervalNs);
            }
        }, "log-background-sync-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * @param channel the segment now being written, or null.
     */
    void target(final FileChannel channel)
    {
        target = channel;
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
    }
}
