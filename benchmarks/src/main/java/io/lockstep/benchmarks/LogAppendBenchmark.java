package io.lockstep.benchmarks;

import io.lockstep.archive.ArchiveLog;
import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.archive.FrameDescriptor;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Append speed of archive-log next to the raw speed of the same disk, measured by the same program on the same
 * bytes: 288-byte messages (320-byte frames) in batches of 1, 16 and 256, under {@code NONE} and {@code BATCH},
 * against plain sequential {@code FileChannel} writes of equal-sized chunks, with and without {@code fdatasync}.
 * The ratios are the figures that matter. Also bytes allocated per append on the writing thread (target 0).
 * <p>
 * Usage: {@code LogAppendBenchmark [--seconds S] [--dir DIR] [--size BYTES] [--batches 1,16,256]}. Each case runs
 * S seconds (default 3) after a warm-up, or until 1 GiB, whichever comes first. Every result is also printed as a
 * line of key=value pairs for scripts.
 */
public final class LogAppendBenchmark
{
    private static final long MAX_BYTES_PER_CASE = 1L << 30;

    private final Path dir;
    private final double seconds;
    private final int messageSize;

    private LogAppendBenchmark(final Path dir, final double seconds, final int messageSize)
    {
        this.dir = dir;
        this.seconds = seconds;
        this.messageSize = messageSize;
    }

    record Result(long bytes, long frames, long syncs, long nanos, long allocatedBytes)
    {
        double mbPerSecond()
        {
            return bytes / 1e6 / (nanos / 1e9);
        }

        double framesPerSecond()
        {
            return frames / (nanos / 1e9);
        }

        double syncsPerSecond()
        {
            return syncs / (nanos / 1e9);
        }
    }

    public static void main(final String[] args) throws Exception
    {
        double seconds = 3;
        Path dir = null;
        int size = 288;
        int[] batches = { 1, 16, 256 };
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--size" -> size = Integer.parseInt(args[++i]);
                case "--batches" -> batches = Stream.of(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                default -> throw new IllegalArgumentException("unknown option " + args[i] +
                    "; usage: [--seconds S] [--dir DIR] [--size BYTES] [--batches 1,16,256]");
            }
        }
        final Path root = null != dir ? dir : Files.createTempDirectory("lockstep-append-bench");
        Files.createDirectories(root);
        try
        {
            new LogAppendBenchmark(root, seconds, size).run(batches);
        }
        finally
        {
            TempDirs.deleteTree(root);
        }
    }

    private void run(final int[] batches) throws Exception
    {
        final int frameLength = FrameDescriptor.alignedFrameLength(messageSize);
        System.out.printf(Locale.ROOT,
            "archive-log append benchmark: %d-byte messages (%d-byte frames), %.1f s per case, dir=%s%n",
            messageSize, frameLength, seconds, dir);
        System.out.printf(Locale.ROOT, "%-6s %-7s %10s %12s %10s %10s %12s %8s %14s%n",
            "batch", "policy", "MB/s", "frames/s", "fsyncs/s", "raw MB/s", "raw fsyncs/s", "ratio", "alloc B/append");
        for (final int batch : batches)
        {
            // Each log case runs right after its raw pair, and the page cache is flushed before every case, so
            // one case's dirty pages do not slow the next one's writes and fsyncs.
            final Result rawWrite = raw(batch * frameLength, false);
            final Result none = log(batch, DurabilityPolicy.NONE);
            final Result rawSync = raw(batch * frameLength, true);
            final Result durable = log(batch, DurabilityPolicy.BATCH);
            print(batch, "NONE", none, rawWrite, none.mbPerSecond() / rawWrite.mbPerSecond());
            print(batch, "BATCH", durable, rawSync, durable.syncsPerSecond() / rawSync.syncsPerSecond());
        }
        System.out.println("ratio: NONE = MB/s over raw write MB/s (target >= 0.8 at batch 256); " +
            "BATCH = fsyncs/s over raw write+fdatasync rate (target >= 0.9)");
        System.out.println("alloc B/append above includes opening a new segment file every 64 MiB (control path).");
        steadyStateAllocation();
    }

    /**
     * Bytes allocated by the writing thread over many appends and flushes that stay inside one segment: the hot
     * path alone, without the control-path work of opening a new segment file.
     */
    private void steadyStateAllocation() throws IOException
    {
        final Path logDir = Files.createTempDirectory(dir, "alloc");
        final UnsafeBuffer message = new UnsafeBuffer(new byte[messageSize]);
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(logDir).segmentLength(1 << 30);
        try (ArchiveLog log = ArchiveLog.open(config))
        {
            final int batch = 16;
            for (int i = 0; i < 20_000; i++)
            {
                appendBatch(log, message, batch);
            }
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final int batches = 20_000;
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < batches; i++)
            {
                appendBatch(log, message, batch);
            }
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            final long appends = (long)batches * batch;
            System.out.printf(Locale.ROOT, "steady state: %d bytes allocated over %d appends and %d flushes%n",
                allocated, appends, batches);
            System.out.printf(Locale.ROOT, "archive-log mode=alloc appends=%d flushes=%d allocated_bytes=%d " +
                "alloc_bytes_per_append=%.4f%n", appends, batches, allocated, (double)allocated / appends);
        }
        finally
        {
            TempDirs.deleteTree(logDir);
        }
    }

    /** Write back every dirty page on the machine so the next case starts from a quiet disk. */
    private static void flushPageCache()
    {
        try
        {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
        }
        catch (final IOException | InterruptedException ex)
        {
            System.out.println("(sync unavailable: " + ex + ")");
        }
    }

    private void print(final int batch, final String policy, final Result r, final Result raw, final double ratio)
    {
        final double allocPerAppend = (double)r.allocatedBytes() / r.frames();
        System.out.printf(Locale.ROOT, "%-6d %-7s %10.1f %12.0f %10.0f %10.1f %12.0f %8.2f %14.3f%n",
            batch, policy, r.mbPerSecond(), r.framesPerSecond(), r.syncsPerSecond(), raw.mbPerSecond(),
            raw.syncsPerSecond(), ratio, allocPerAppend);
        System.out.printf(Locale.ROOT,
            "archive-log mode=append policy=%s batch=%d size=%d mb_s=%.1f frames_s=%.0f fsyncs_s=%.0f " +
            "raw_mb_s=%.1f raw_fsyncs_s=%.0f ratio=%.3f alloc_bytes_per_append=%.3f%n",
            policy, batch, messageSize, r.mbPerSecond(), r.framesPerSecond(), r.syncsPerSecond(), raw.mbPerSecond(),
            raw.syncsPerSecond(), ratio, allocPerAppend);
    }

    private Result log(final int batch, final DurabilityPolicy policy) throws IOException
    {
        flushPageCache();
        final Path logDir = Files.createTempDirectory(dir, "log");
        final UnsafeBuffer message = new UnsafeBuffer(BufferUtil.allocateDirectAligned(messageSize, 64));
        for (int i = 0; i < messageSize; i++)
        {
            message.putByte(i, (byte)i);
        }
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(logDir).durability(policy);
        try (ArchiveLog log = ArchiveLog.open(config))
        {
            // Warm-up: let the JIT compile the append path before anything is counted.
            final long warmupEnd = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() < warmupEnd)
            {
                appendBatch(log, message, batch);
            }
            final long startPosition = log.appendedPosition();
            long frames = 0;
            long syncs = 0;
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
            final long start = System.nanoTime();
            final long end = start + (long)(seconds * 1e9);
            long now = start;
            while (now < end && log.appendedPosition() - startPosition < MAX_BYTES_PER_CASE)
            {
                appendBatch(log, message, batch);
                frames += batch;
                syncs++;
                now = System.nanoTime();
            }
            final long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
            return new Result(log.appendedPosition() - startPosition, frames,
                policy == DurabilityPolicy.BATCH ? syncs : 0, now - start, allocated);
        }
        finally
        {
            TempDirs.deleteTree(logDir);
        }
    }

    private static void appendBatch(final ArchiveLog log, final UnsafeBuffer message, final int batch)
    {
        for (int i = 0; i < batch; i++)
        {
            if (log.append(1, 1, message, 0, message.capacity()) < 0)
            {
                throw new IllegalStateException("batch buffer full: batch too large for maxBatchLength");
            }
        }
        log.flush();
    }

    private Result raw(final int chunkLength, final boolean sync) throws IOException
    {
        flushPageCache();
        final Path file = dir.resolve("raw.dat");
        final ByteBuffer chunk = BufferUtil.allocateDirectAligned(chunkLength, 4096);
        for (int i = 0; i < chunkLength; i++)
        {
            chunk.put(i, (byte)i);
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            long position = 0;
            final long warmupEnd = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() < warmupEnd)
            {
                position += writeChunk(channel, chunk, position, sync);
            }
            long writes = 0;
            final long startPosition = position;
            final long start = System.nanoTime();
            final long end = start + (long)(seconds * 1e9);
            long now = start;
            while (now < end && position - startPosition < MAX_BYTES_PER_CASE)
            {
                position += writeChunk(channel, chunk, position, sync);
                writes++;
                now = System.nanoTime();
            }
            return new Result(position - startPosition, writes, sync ? writes : 0, now - start, 0);
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    private static int writeChunk(final FileChannel channel, final ByteBuffer chunk, final long position,
        final boolean sync) throws IOException
    {
        chunk.clear();
        int written = 0;
        while (chunk.hasRemaining())
        {
            written += channel.write(chunk, position + written);
        }
        if (sync)
        {
            channel.force(false);
        }
        return written;
    }
}
