package io.lockstep.benchmarks;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.AdminClient;
import io.lockstep.consensus.LocalCluster;
import io.lockstep.examples.EchoService;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Failover under a steady rate: three member processes running the echo service, this process as the client; half
 * way through, the leader is killed with SIGKILL. Prints the client-observed outage (from the last response before
 * the kill to the first response to a message sent after it) and the messages lost (never echoed) and duplicated
 * (echoed twice): both must be 0 with Lockstep's exactly-once sessions.
 * {@code FailoverBenchmark [--rate 2000] [--seconds 10] [--size 288]}
 */
public final class FailoverBenchmark
{
    private static final int MAX = 1 << 22;

    private final byte[] echoes = new byte[MAX];
    private final long[] sentAt = new long[MAX];
    private long lastResponseNs;
    private long lastResponseBeforeKillNs;
    private long killedAtNs;
    private long firstAfterKillNs;
    private long duplicated;

    private FailoverBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        java.util.logging.Logger.getLogger("io.lockstep").setLevel(java.util.logging.Level.WARNING);
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
                    // Options of the other modes (--warmup, --out, --durability) do not apply here.
                }
            }
        }
        final Path root = Files.createTempDirectory("lockstep-failover");
        try (LocalCluster cluster = new LocalCluster(root, 3, "none", 64 * 1024 * 1024, EchoService.class.getName()))
        {
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            new FailoverBenchmark().run(cluster, rate, seconds, size);
        }
        finally
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

    private void run(final LocalCluster cluster, final int rate, final int seconds, final int size) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[Math.max(16, size)]);
        long sent = 0;
        try (AdminClient admin = new AdminClient(cluster.members());
            ClusterClient client = ClusterClient.connect(cluster.members(), this::onEcho))
        {
            if (!client.awaitConnected(20_000))
            {
                throw new IllegalStateException("no session within 20 s");
            }
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long killAt = start + TimeUnit.SECONDS.toNanos(seconds) / 2;
            final long end = start + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < end && sent < MAX)
            {
                final long now = System.nanoTime();
                if (0 == killedAtNs && now >= killAt)
                {
                    final int leader = admin.awaitLeader(5_000);
                    lastResponseBeforeKillNs = lastResponseNs;
                    cluster.kill(leader);
                    killedAtNs = System.nanoTime();
                }
                if (now >= start + sent * intervalNs)
                {
                    message.putLong(0, sent);
                    sentAt[(int)sent] = System.nanoTime();
                    if (client.offer(message, 0, message.capacity()) >= 0)
                    {
                        sent++;
                    }
                }
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            final long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (received() < sent && System.nanoTime() < drainUntil)
            {
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
        }
        final long received = received();
        final long outageMs = TimeUnit.NANOSECONDS.toMillis(firstAfterKillNs - lastResponseBeforeKillNs);
        System.out.printf(Locale.ROOT, "failover at %d msg/s: outage %d ms (last response before the kill to the " +
            "first response to a message sent after it), sent %d, lost %d, duplicated %d%n", rate, outageMs, sent,
            sent - received, duplicated);
        System.out.printf(Locale.ROOT, "lockstep mode=failover rate=%d size=%d outage_ms=%d sent=%d lost=%d " +
            "duplicated=%d%n", rate, size, outageMs, sent, sent - received, duplicated);
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

    private void onEcho(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
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
    }
}
