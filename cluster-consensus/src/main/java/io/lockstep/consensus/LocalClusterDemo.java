package io.lockstep.consensus;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code bin/lockstep demo}: three member processes on loopback, a driver appending 288-byte entries as fast as
 * each commit allows, the leader killed with SIGKILL part-way and restarted later. Prints progress each second and
 * ends with a summary whose last line scripts can read:
 * {@code demo summary: sent=N acked=N lost=N duplicated=N failover_ms=N}. Every acknowledged entry is then looked
 * up in every member's log on disk. Until client sessions exist (the service work), a retry after a lost ack can
 * append an entry twice: duplicates are counted, not hidden.
 */
public final class LocalClusterDemo
{
    private static final int PAYLOAD = 288;

    private LocalClusterDemo()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        int durationS = 20;
        for (int i = 0; i < args.length; i++)
        {
            if ("--duration".equals(args[i]) && i + 1 < args.length)
            {
                durationS = Integer.parseInt(args[++i]);
            }
            else
            {
                System.err.println("usage: lockstep demo [--duration SECONDS]");
                System.exit(2);
            }
        }
        if (durationS < 6)
        {
            System.err.println("lockstep demo: --duration must be at least 6 seconds");
            System.exit(2);
        }
        final Path root = Files.createTempDirectory("lockstep-demo");
        final int exit;
        try (LocalCluster cluster = new LocalCluster(root, 3, "batch", 64 * 1024 * 1024))
        {
            exit = run(cluster, durationS);
        }
        finally
        {
            deleteTree(root);
        }
        System.exit(exit);
    }

    private static int run(final LocalCluster cluster, final int durationS) throws Exception
    {
        System.out.println("lockstep demo: starting 3 members on loopback (timeouts lan, durability batch)");
        for (int i = 0; i < 3; i++)
        {
            cluster.start(i);
        }
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
        final Long2LongHashMap acked = new Long2LongHashMap(-1);
        long sent = 0;
        long failoverMs = -1;
        int killed = -1;
        try (AdminClient client = new AdminClient(cluster.members()))
        {
            final long start = System.nanoTime();
            final long end = start + TimeUnit.SECONDS.toNanos(durationS);
            final long killAt = start + TimeUnit.SECONDS.toNanos(durationS) * 2 / 5;
            final long restartAt = start + TimeUnit.SECONDS.toNanos(durationS) * 3 / 5;
            long killedAt = 0;
            long second = start + TimeUnit.SECONDS.toNanos(1);
            final long[] latencies = new long[200_000];
            int inSecond = 0;
            while (System.nanoTime() < end)
            {
                final long now = System.nanoTime();
                if (killed < 0 && now >= killAt)
                {
                    killed = leader(client);
                    System.out.printf("lockstep demo: killing leader %d (pid %d) with SIGKILL%n", killed,
                        cluster.pid(killed));
                    cluster.kill(killed);
                    killedAt = System.nanoTime();
                }
                if (killed >= 0 && cluster.pid(killed) < 0 && now >= restartAt)
                {
                    System.out.printf("lockstep demo: restarting member %d on its data directory%n", killed);
                    cluster.start(killed);
                }

                payload.putLong(0, sent);
                final long t0 = System.nanoTime();
                final long position = client.append(payload, 0, PAYLOAD, 5000);
                final long t1 = System.nanoTime();
                if (position >= 0)
                {
                    acked.put(sent, position);
                    if (inSecond < latencies.length)
                    {
                        latencies[inSecond++] = t1 - t0;
                    }
                    if (killedAt > 0 && failoverMs < 0)
                    {
                        failoverMs = TimeUnit.NANOSECONDS.toMillis(t1 - killedAt);
                        System.out.printf("lockstep demo: new leader %d committing %d ms after the kill%n",
                            leader(client), failoverMs);
                    }
                }
                sent++;
                if (t1 >= second)
                {
                    Arrays.sort(latencies, 0, inSecond);
                    System.out.printf("t=%2ds appends/s=%5d p50_us=%5d p99_us=%6d acked=%d%n",
                        TimeUnit.NANOSECONDS.toSeconds(t1 - start), inSecond,
                        inSecond > 0 ? latencies[inSecond / 2] / 1000 : 0,
                        inSecond > 0 ? latencies[(int)(inSecond * 0.99)] / 1000 : 0, acked.size());
                    inSecond = 0;
                    second += TimeUnit.SECONDS.toNanos(1);
                }
            }
            if (killed >= 0 && cluster.pid(killed) < 0)
            {
                cluster.start(killed);
            }
            awaitConverged(client);
        }
        cluster.close();

        long lost = 0;
        long duplicated = 0;
        final LogAudit first = LogAudit.of(cluster.logDir(0), PAYLOAD);
        boolean identical = true;
        for (int i = 0; i < 3; i++)
        {
            final LogAudit audit = 0 == i ? first : LogAudit.of(cluster.logDir(i), PAYLOAD);
            lost = Math.max(lost, audit.lost(acked));
            duplicated = Math.max(duplicated, audit.duplicated());
            identical &= audit.frames().equals(first.frames());
        }
        System.out.printf("lockstep demo: all three logs %s; every acknowledged entry checked on disk%n",
            identical ? "identical" : "DIFFER");
        System.out.printf("demo summary: sent=%d acked=%d lost=%d duplicated=%d failover_ms=%d%n",
            sent, acked.size(), lost, duplicated, failoverMs);
        return identical && 0 == lost ? 0 : 1;
    }

    private static int leader(final AdminClient client)
    {
        return client.awaitLeader(10_000);
    }

    private static void awaitConverged(final AdminClient client)
    {
        if (null == client.awaitConverged(30_000))
        {
            System.out.println("lockstep demo: members did not converge within 30 s");
        }
    }

    private static void deleteTree(final Path root) throws java.io.IOException
    {
        try (Stream<Path> paths = Files.walk(root))
        {
            for (final Path p : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(p);
            }
        }
    }
}
