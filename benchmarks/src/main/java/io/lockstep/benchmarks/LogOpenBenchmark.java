package io.lockstep.benchmarks;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.consensus.LogEntryType;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * What a member's restart spends on its log, by log size: opening it (recovery checks every frame and finds the
 * end, noting the few frames the member needs) and the member's own pass (where each term starts, log time,
 * membership changes: only the frames recovery noted are read again), timed apart, on a log of 288-byte entries
 * written for the purpose. The page cache is warm (just written) unless {@code --cold}
 * drops it first (root only). JVM start and snapshot loading come on top and do not grow with the log.
 * <p>
 * Usage: {@code LogOpenBenchmark [--mib 1024,4096] [--dir DIR] [--cold] [--runs 3]}. Prints one line per size and
 * run, key=value.
 */
public final class LogOpenBenchmark
{
    private static final int PAYLOAD = 288;

    private LogOpenBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        long[] sizesMib = { 1024 };
        Path root = Path.of("target", "bench-open");
        boolean cold = false;
        int runs = 3;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--mib" -> sizesMib = Arrays.stream(args[++i].split(",")).mapToLong(Long::parseLong).toArray();
                case "--dir" -> root = Path.of(args[++i]);
                case "--cold" -> cold = true;
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] +
                    "; usage: [--mib 1024,4096] [--dir DIR] [--cold] [--runs 3]");
            }
        }
        for (final long mib : sizesMib)
        {
            final Path dir = root.resolve(mib + "mib");
            TempDirs.deleteTree(dir);
            Files.createDirectories(dir);
            final long written = write(config(dir), mib << 20);
            for (int run = 0; run < runs; run++)
            {
                if (cold)
                {
                    dropPageCache();
                }
                final long openStart = System.nanoTime();
                try (ArchiveRaftLog log = new ArchiveRaftLog(config(dir)))
                {
                    final long opened = System.nanoTime();
                    final long[] frames = new long[1];
                    log.scanAtOpen((position, term, type, buffer, offset) -> frames[0]++);
                    final long scanned = System.nanoTime();
                    System.out.printf(Locale.ROOT, "log-open log_mib=%d frames_read_again=%d cache=%s open_ms=%.0f " +
                        "member_pass_ms=%.0f total_ms=%.0f end=%d%n", written >> 20, frames[0], cold ? "cold" : "warm",
                        (opened - openStart) / 1e6, (scanned - opened) / 1e6, (scanned - openStart) / 1e6,
                        log.pendingPosition());
                }
            }
            TempDirs.deleteTree(dir);
        }
    }

    private static ArchiveLogConfig config(final Path dir)
    {
        // Defaults as a member runs: 64 MiB segments, batch durability.
        return new ArchiveLogConfig().directory(dir).durability(DurabilityPolicy.BATCH);
    }

    private static long write(final ArchiveLogConfig config, final long bytes)
    {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
        try (ArchiveRaftLog log = new ArchiveRaftLog(config))
        {
            long term = 1;
            long nextTerm = 256L << 20;
            while (log.pendingPosition() < bytes)
            {
                if (log.append(term, LogEntryType.CLIENT_APPEND, payload, 0, PAYLOAD) < 0)
                {
                    log.flush();
                }
                if (log.pendingPosition() >= nextTerm)
                {
                    term++; // a new term now and then, as elections make
                    nextTerm += 256L << 20;
                }
            }
            log.flush();
            return log.pendingPosition();
        }
    }

    private static void dropPageCache() throws Exception
    {
        final Process sync = new ProcessBuilder("sync").inheritIO().start();
        sync.waitFor();
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    }
}
