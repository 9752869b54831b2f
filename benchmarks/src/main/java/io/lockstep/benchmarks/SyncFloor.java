package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The least a durable commit can take on this machine's disk: three threads, as three members on one disk, each
 * appending a small batch to a file of its own and forcing it ({@code fdatasync}), back to back, all at once. A
 * commit under {@code batch} durability waits for the sync that holds its message on the leader and on a follower,
 * so a message waits for part of one sync in progress and then all of the next: between one and two of these.
 */
final class SyncFloor
{
    private static final int WRITERS = 3;
    private static final int BATCH_BYTES = 4 * 320;

    private SyncFloor()
    {
    }

    /** Measure for the given seconds; print as a sentence and as a key=value line ({@code machine mode=sync}). */
    static void print(final int seconds) throws Exception
    {
        final Path dir = Files.createTempDirectory("lockstep-sync-floor");
        final Histogram[] syncs = new Histogram[WRITERS];
        final Thread[] writers = new Thread[WRITERS];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try
        {
            for (int i = 0; i < WRITERS; i++)
            {
                final Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
                final Path file = dir.resolve("writer-" + i);
                syncs[i] = h;
                writers[i] = new Thread(() -> syncBackToBack(file, end, h), "sync-floor-" + i);
                writers[i].setUncaughtExceptionHandler((t, ex) -> failure.compareAndSet(null, ex));
                writers[i].start();
            }
            final Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            for (int i = 0; i < WRITERS; i++)
            {
                writers[i].join();
                all.add(syncs[i]);
            }
            if (null != failure.get())
            {
                throw new IllegalStateException("a sync-floor writer failed in " + dir, failure.get());
            }
            System.out.printf(Locale.ROOT, "disk: %d files appended to and synced back to back at once (%d-byte " +
                "batches, as %d members on one disk): %d syncs, fdatasync p50 %d us, p99 %d us, p99.9 %d us, " +
                "max %d us%n", WRITERS, BATCH_BYTES, WRITERS, all.getTotalCount(), all.getValueAtPercentile(50) / 1000,
                all.getValueAtPercentile(99) / 1000, all.getValueAtPercentile(99.9) / 1000, all.getMaxValue() / 1000);
            System.out.printf(Locale.ROOT, "machine mode=sync writers=%d batch_bytes=%d syncs=%d sync_p50_us=%d " +
                "sync_p99_us=%d sync_p999_us=%d sync_max_us=%d%n", WRITERS, BATCH_BYTES, all.getTotalCount(),
                all.getValueAtPercentile(50) / 1000, all.getValueAtPercentile(99) / 1000,
                all.getValueAtPercentile(99.9) / 1000, all.getMaxValue() / 1000);
        }
        finally
        {
            TempDirs.deleteTree(dir);
        }
    }

    private static void syncBackToBack(final Path file, final long end, final Histogram syncs)
    {
        final ByteBuffer batch = ByteBuffer.allocateDirect(BATCH_BYTES);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE))
        {
            long position = 0;
            while (System.nanoTime() < end)
            {
                batch.clear();
                while (batch.hasRemaining())
                {
                    position += channel.write(batch, position);
                }
                final long start = System.nanoTime();
                channel.force(false);
                syncs.recordValue(System.nanoTime() - start);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
