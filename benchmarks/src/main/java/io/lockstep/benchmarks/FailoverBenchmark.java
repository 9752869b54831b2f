package io.lockstep.benchmarks;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.examples.EchoService;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Failover under a steady rate: three member processes running the echo service, this process as the client; half
 * way through, the leader is killed with SIGKILL. Prints the client-observed outage and the messages lost and
 * duplicated ({@link EchoTally}): both must be 0 with Lockstep's exactly-once sessions.
 * {@code FailoverBenchmark [--rate 2000] [--seconds 10] [--size 288] [--delay-ms D] [--timeouts lan|wan]}
 * ({@link ZoneOptions}: members across zones).
 */
public final class FailoverBenchmark
{
    private final EchoTally tally = new EchoTally();

    private FailoverBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Logger.getLogger("io.lockstep").setLevel(Level.WARNING);
        final ZoneOptions zones = ZoneOptions.parse(args);
        final BenchmarkOptions options = BenchmarkOptions.parse(zones.rest(),
            new BenchmarkOptions(new int[]{ 2000 }, 10, 0, 288, "none", Path.of("target", "bench")));
        final Path root = Files.createTempDirectory("lockstep-failover");
        try (LocalCluster cluster = new LocalCluster(root, 3, options.durability(), 64 * 1024 * 1024,
            EchoService.class.getName()))
        {
            zones.apply(cluster, options.size());
            System.out.printf("lockstep: 3 members (echo service, %s), leader SIGKILLed half way%n", zones.describe());
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            new FailoverBenchmark().run(cluster, options.rates()[0], options.seconds(), options.size());
        }
        finally
        {
            TempDirs.deleteTree(root);
        }
    }

    private void run(final LocalCluster cluster, final int rate, final int seconds, final int size) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        long sent = 0;
        try (ClusterClient client = ClusterClient.connect(cluster.members(), this::onEcho))
        {
            if (!client.awaitConnected(20_000))
            {
                throw new IllegalStateException("no session within 20 s");
            }
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long killAt = start + TimeUnit.SECONDS.toNanos(seconds) / 2;
            final long end = start + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < end && sent < EchoTally.MAX)
            {
                final long now = System.nanoTime();
                if (!tally.hasKilled() && now >= killAt && client.isConnected())
                {
                    // The leader as the client knows it (its session is on it), as the Aeron benchmark asks its
                    // client: asking the members through the tool here took milliseconds in which the client was not
                    // polled, and that time counted as outage.
                    tally.killing();
                    cluster.kill(client.leaderId());
                    tally.killed(System.nanoTime());
                }
                if (now >= start + sent * intervalNs)
                {
                    message.putLong(0, sent);
                    tally.sent(sent, System.nanoTime());
                    if (client.offer(message, 0, size) >= 0)
                    {
                        sent++;
                    }
                }
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            if (!tally.hasKilled())
            {
                throw new IllegalStateException("no leader was killed: the client had no session from half way to " +
                    "the end, so there is no failover to report");
            }
            final long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (tally.received() < sent && System.nanoTime() < drainUntil)
            {
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
        }
        tally.report("lockstep", rate, size, sent);
    }

    private void onEcho(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        tally.echoed(buffer.getLong(offset), System.nanoTime());
    }
}
