package io.lockstep.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Under {@link DurabilityPolicy#BATCH}, the {@code fdatasync} of each written batch and the promise after it, on a
 * thread of its own, so that the writer does not wait for its disk (except at a segment rollover, below):
 * <ul>
 * <li>a leader sends a batch to its followers while its own disk syncs it (Raft allows the leader's write in
 * parallel with replication, section 10.2.1 of Ongaro's thesis: it counts itself towards a majority only once its
 * copy is durable), so a durable commit costs one sync and a round trip, not two syncs and a round trip;</li>
 * <li>a member whose disk has become slow keeps answering heartbeats and messages; what lags is only its
 * {@link #durablePosition()}, which its leader can see and act on.</li>
 * </ul>
 * The writer asks for a position to become durable ({@link #request}) after writing the bytes below it; this thread
 * forces the segment, records and forces the promise, and then publishes the position. Requests only rise, so a
 * sync covers every request before it (natural batching again). The writer waits for the thread ({@link #await})
 * only before changing which file holds the tail: at a segment rollover, a truncation, and at close.
 * <p>
 * A failed sync is fatal, as it always was: the data it covered may be lost from the page cache, so the log refuses
 * further use and the member stops.
 */
final class LogSync
{
    /** The longest sync a test may inject. */
    private static final long MAX_INJECTED_DELAY_MS = 60_000;

    private final Thread thread;
    private final PromiseFile promise;
    private final Path slowSyncFile;
    /** Even when {@link #requestedPosition} and {@link #requestedTerm} are consistent (a sequence lock). */
    private final AtomicLong requestSequence = new AtomicLong();
    private volatile long requestedPosition;
    private volatile long requestedTerm;
    private volatile FileChannel target;
    private volatile Path targetFile;
    private final AtomicLong durablePosition = new AtomicLong();
    /** Raised by {@link #restartAt}: a request read before it is of a log that no longer exists. */
    private final AtomicLong generation = new AtomicLong();
    private volatile long lastSyncNs = -1;
    private volatile ArchiveException failure;
    private volatile Runnable onDurable;
    private volatile boolean running = true;

    /**
     * @param name         names the thread.
     * @param position     the durable position at open.
     * @param promise      the log's promise, raised by this thread from now on.
     * @param slowSyncFile for tests only, or null: while this file exists, each sync first waits the milliseconds
     *                     written in it (an injected slow disk).
     */
    LogSync(final String name, final long position, final PromiseFile promise, final Path slowSyncFile)
    {
        this.promise = promise;
        this.slowSyncFile = slowSyncFile;
        requestedPosition = position;
        durablePosition.set(position);
        thread = new Thread(this::run, "log-sync-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** @param listener run on this thread each time the durable position rises (to wake the writer's thread). */
    void onDurable(final Runnable listener)
    {
        this.onDurable = listener;
    }

    /**
     * The file the next requests are in. Called only when no sync is outstanding ({@link #await} first).
     */
    void target(final FileChannel channel, final Path file)
    {
        target = channel;
        targetFile = file;
    }

    /**
     * Ask for everything below a position, written to the target file, to be made durable.
     *
     * @param position where the last written frame ends.
     * @param term     that frame's term (what the promise records with the position).
     */
    void request(final long position, final long term)
    {
        throwIfFailed();
        final long sequence = requestSequence.get();
        requestSequence.set(sequence + 1);
        requestedTerm = term;
        requestedPosition = position;
        requestSequence.set(sequence + 2);
        LockSupport.unpark(thread);
    }

    /** @return the position up to which the disk holds the log and the promise says so. */
    long durablePosition()
    {
        return durablePosition.get();
    }

    /** @return how long the last sync took, in ns, or -1 before the first (for the writer's metrics). */
    long lastSyncNs()
    {
        return lastSyncNs;
    }

    /**
     * Wait until every request so far is durable (or has failed, which throws).
     */
    void await()
    {
        while (durablePosition.get() < requestedPosition)
        {
            throwIfFailed();
            if (!thread.isAlive())
            {
                throw new ArchiveException(ArchiveException.Reason.IO_ERROR, targetFile, requestedPosition,
                    "the log's sync thread has stopped; the log must be reopened", null);
            }
            LockSupport.unpark(thread);
            LockSupport.parkNanos(50_000L); // not a spin: a slow disk would hold a core for as long as it is slow
        }
        throwIfFailed();
    }

    /**
     * The log was cut below what it had made durable (a truncation): the durable position is where it now ends.
     * Called only when no sync is outstanding ({@link #await} first).
     */
    void restartAt(final long position)
    {
        final long sequence = requestSequence.get();
        requestSequence.set(sequence + 1);
        // Inside the window: a request read with a stable sequence after this saw the new generation, and one read
        // before it fails the generation check that comes after its comparison with the durable position.
        generation.incrementAndGet();
        requestedPosition = position;
        requestSequence.set(sequence + 2);
        durablePosition.set(position);
    }

    void throwIfFailed()
    {
        final ArchiveException ex = failure;
        if (null != ex)
        {
            throw ex;
        }
    }

    private void run()
    {
        while (running)
        {
            final long gen = generation.get();
            final long sequence = requestSequence.get();
            final long position = requestedPosition;
            final long term = requestedTerm;
            if (0 != (sequence & 1) || sequence != requestSequence.get())
            {
                Thread.onSpinWait(); // the writer is between the two halves of a request
                continue;
            }
            if (position <= durablePosition.get() || null != failure || gen != generation.get())
            {
                LockSupport.parkNanos(this, 100_000_000L);
                continue;
            }
            try
            {
                final long startNs = System.nanoTime(); // an injected slow disk shows in the sync times too
                waitIfSlowDiskInjected();
                if (!running)
                {
                    break; // closing: the writer has stopped waiting, and the promise may be unmapped next
                }
                target.force(false);
                if (LogRecovery.isAhead(term, position, promise.term(), promise.position()))
                {
                    promise.record(position, term, true);
                    promise.force();
                }
                lastSyncNs = System.nanoTime() - startNs;
            }
            catch (final Throwable ex)
            {
                failure = new ArchiveException(ArchiveException.Reason.IO_ERROR, targetFile, position,
                    "fsync failed; the log must be reopened: " + ex, ex);
                continue;
            }
            durablePosition.set(position);
            final Runnable listener = onDurable;
            if (null != listener)
            {
                try
                {
                    listener.run();
                }
                catch (final RuntimeException ex)
                {
                    // A wake-up that failed (the member closing its selector): the writer looks again on its own.
                }
            }
        }
    }

    private void waitIfSlowDiskInjected()
    {
        // A regular file of a few bytes only: a pipe or a device planted there must not hang or flood this thread.
        if (null == slowSyncFile || !Files.isRegularFile(slowSyncFile, LinkOption.NOFOLLOW_LINKS))
        {
            return;
        }
        try
        {
            if (Files.size(slowSyncFile) > 32)
            {
                return;
            }
            final long delayMs = Math.min(Math.max(0, Long.parseLong(Files.readString(slowSyncFile).trim())),
                MAX_INJECTED_DELAY_MS);
            // Not parkNanos: each request unparks this thread, and the delay must hold whatever the writer does.
            final long untilNs = System.nanoTime() + delayMs * 1_000_000L;
            for (long left = untilNs - System.nanoTime(); left > 0 && running && Files.exists(slowSyncFile);
                left = untilNs - System.nanoTime())
            {
                Thread.sleep(Math.min(left / 1_000_000L + 1, 100));
            }
        }
        catch (final IOException | NumberFormatException ex)
        {
            // Removed or half written as it was read: no delay this time.
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stop the thread: the writer has awaited what it requested, or has failed.
     *
     * @return true if it stopped; false if it is still inside a sync after 10 s (a hung disk): the promise's mapping
     * must then be left alone.
     */
    boolean stop()
    {
        running = false;
        LockSupport.unpark(thread);
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

}
