package io.lockstep.benchmarks.aeron;

import io.aeron.cluster.client.AeronCluster;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * The Aeron Cluster side of {@code bench failover}: the same steady rate and measurement as Lockstep's
 * FailoverBenchmark, the leader's node process killed with SIGKILL half way. The client is Aeron's own: it follows
 * the new leader, and is reconnected here if it closes; it does not resend what it had offered, so messages in
 * flight at the kill may be lost, which is counted.
 */
public final class AeronFailoverBenchmark
{
    private static final int MAX = 1 << 22;

    private final byte[] echoes = new byte[MAX];
    private final long[] sentAt = new long[MAX];
    private long lastResponseNs;
    private long lastResponseBeforeKillNs;
    private long killedAtNs;
    private long firstAfterKillNs;
    private long duplicated;

    private AeronFailoverBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        int rate = 2000;
        int seconds = 10;
        int size = 288;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--rate", "--rates" -> rate = Integer.parseInt(args[i + 1].split(",")[0]);
                case "--seconds", "--duration" -> seconds = Integer.parseInt(args[i + 1]);
                case "--size" -> size = Integer.parseInt(args[i + 1]);
                default ->
                {
                }
            }
        }
        final Path root = Files.createTempDirectory("aeron-failover");
        final int portBase = 20_000 + (int)(ProcessHandle.current().pid() % 1000) * 40;
        final List<Process> nodes = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                nodes.add(AeronLatencyBenchmark.startNode(i, root, portBase));
            }
            new AeronFailoverBenchmark().run(nodes, portBase, rate, seconds, size);
        }
        finally
        {
            for (final Process p : nodes)
            {
                p.destroy();
            }
            for (final Process p : nodes)
            {
                if (!p.waitFor(10, TimeUnit.SECONDS))
                {
                    p.destroyForcibly();
                }
            }
            try (Stream<Path> paths = Files.walk(root))
            {
                for (final Path p : paths.sorted(Comparator.reverseOrder()).toList())
                {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private void run(final List<Process> nodes, final int portBase, final int rate, final int seconds, final int size)
        throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[Math.max(16, size)]);
        long sent = 0;
        try (MediaDriver driver = MediaDriver.launchEmbedded(new MediaDriver.Context()
            .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new BackoffIdleStrategy())
            .dirDeleteOnStart(true).dirDeleteOnShutdown(true)))
        {
            AeronCluster client = connect(driver.aeronDirectoryName(), portBase);
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long killAt = start + TimeUnit.SECONDS.toNanos(seconds) / 2;
            final long end = start + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < end && sent < MAX)
            {
                final long now = System.nanoTime();
                if (0 == killedAtNs && now >= killAt)
                {
                    lastResponseBeforeKillNs = lastResponseNs;
                    final Process leader = nodes.get(client.leaderMemberId());
                    leader.destroyForcibly();
                    leader.waitFor(10, TimeUnit.SECONDS);
                    killedAtNs = System.nanoTime();
                }
                if (client.isClosed())
                {
                    client.close();
                    client = connect(driver.aeronDirectoryName(), portBase);
                }
                if (now >= start + sent * intervalNs)
                {
                    message.putLong(0, sent);
                    sentAt[(int)sent] = System.nanoTime();
                    if (client.offer(message, 0, message.capacity()) > 0)
                    {
                        sent++;
                    }
                }
                if (0 == client.pollEgress())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            final long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (received() < sent && System.nanoTime() < drainUntil)
            {
                if (0 == client.pollEgress())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            client.close();
        }
        final long received = received();
        final long outageMs = firstAfterKillNs > 0 ?
            TimeUnit.NANOSECONDS.toMillis(firstAfterKillNs - lastResponseBeforeKillNs) : -1;
        System.out.printf(Locale.ROOT, "failover at %d msg/s: outage %d ms, sent %d, lost %d, duplicated %d%n", rate,
            outageMs, sent, sent - received, duplicated);
        System.out.printf(Locale.ROOT, "aeron mode=failover rate=%d size=%d outage_ms=%d sent=%d lost=%d " +
            "duplicated=%d%n", rate, size, outageMs, sent, sent - received, duplicated);
    }

    private AeronCluster connect(final String aeronDir, final int portBase)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true)
        {
            try
            {
                return AeronCluster.connect(new AeronCluster.Context()
                    .aeronDirectoryName(aeronDir)
                    .ingressChannel("aeron:udp?term-length=64k")
                    .ingressEndpoints(AeronEchoNode.ingressEndpoints(portBase))
                    .egressChannel("aeron:udp?endpoint=localhost:0")
                    .egressListener((sessionId, timestamp, buffer, offset, length, header) ->
                    {
                        final int id = (int)buffer.getLong(offset);
                        final long now = System.nanoTime();
                        lastResponseNs = now;
                        if (echoes[id]++ > 0)
                        {
                            duplicated++;
                        }
                        if (killedAtNs > 0 && 0 == firstAfterKillNs && sentAt[id] > killedAtNs)
                        {
                            firstAfterKillNs = now;
                        }
                    }));
            }
            catch (final RuntimeException ex)
            {
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
            }
        }
    }

    private long received()
    {
        long n = 0;
        for (final byte b : echoes)
        {
            n += b > 0 ? 1 : 0;
        }
        return n;
    }
}
