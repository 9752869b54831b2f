package io.lockstep.benchmarks;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.EchoService;
import io.lockstep.localcluster.LocalCluster;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * How far a warm standby behind a cross-zone link trails the leader: three voting members and one standby as
 * processes, the standby reached through a {@code DelayProxy} (5 ms each way unless {@code --delay-ms}), echo
 * messages at each rate from this process, and the leader's view of the standby's lag sampled every 50 ms
 * ({@code tool status}'s {@code standby=} numbers). The leader's view includes the acknowledgement's way back: the
 * standby itself is one delay ahead of it.
 * It also prints the bytes that crossed the zone link per message (both ways, every standby's connection): with
 * {@code --standbys N --relay} standby 3 feeds the others and the figure should stay near one standby's.
 * {@code StandbyLagBenchmark [--rates 1000,10000] [--seconds 10] [--size 288] [--delay-ms 5] [--standbys N] [--relay]}
 */
public final class StandbyLagBenchmark
{
    private StandbyLagBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Logger.getLogger("io.lockstep").setLevel(Level.WARNING);
        long delayMs = 5;
        int standbys = 1;
        boolean relay = false;
        final List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            if ("--delay-ms".equals(args[i]) && i + 1 < args.length)
            {
                delayMs = Long.parseLong(args[++i]);
            }
            else if ("--standbys".equals(args[i]) && i + 1 < args.length)
            {
                standbys = Integer.parseInt(args[++i]);
            }
            else if ("--relay".equals(args[i]))
            {
                relay = true;
            }
            else
            {
                rest.add(args[i]);
            }
        }
        final BenchmarkOptions options = BenchmarkOptions.parse(rest.toArray(new String[0]),
            new BenchmarkOptions(new int[]{ 1000, 10000 }, 10, 2, 288, "none", Path.of("target", "bench")));
        final Path root = Files.createTempDirectory("lockstep-standby");
        final int count = 3 + standbys;
        try (LocalCluster cluster = new LocalCluster(root, count, standbys, options.durability(), 64 * 1024 * 1024,
            EchoService.class.getName()))
        {
            if (relay)
            {
                cluster.configureAll("lockstep.standby.relay", "3");
            }
            cluster.delayStandbys(delayMs);
            for (int i = 0; i < count; i++)
            {
                cluster.start(i);
            }
            System.out.printf("standby lag: 3 voting members and %d standby(s) behind a %d ms each-way delay " +
                "proxy%s, " +
                "durability %s, %d-byte echo messages, %d s per rate%n", standbys, delayMs,
                relay ? ", standby 3 feeding the others" : "", options.durability(), options.size(), options.seconds());
            for (final int rate : options.rates())
            {
                run(cluster, rate, options.seconds(), options.warmup(), options.size(), delayMs, standbys);
            }
        }
        finally
        {
            TempDirs.deleteTree(root);
        }
    }

    /** A standby that has not yet connected through the proxy would be measured catching up, not keeping up. */
    private static void awaitStandbyCaughtUp(final AdminClient admin)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            for (final AdminClient.Status s : admin.status(200).values())
            {
                for (final AdminClient.PeerLag peer : s.peers())
                {
                    if (!peer.voting() && peer.matchPosition() >= 0 && peer.lagBytes() == 0)
                    {
                        return;
                    }
                }
            }
        }
        throw new IllegalStateException("the standby did not catch up within 30 s");
    }

    private static void run(
        final LocalCluster cluster, final int rate, final int seconds, final int warmupS, final int size,
        final long delayMs, final int standbys) throws Exception
    {
        long linkBytesAtStart = 0;
        long sent = 0;
        final Histogram lagMs = new Histogram(60_000, 3);
        long maxLagBytes = 0;
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        try (AdminClient admin = cluster.adminClient();
            ClusterClient client = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> { }))
        {
            if (!client.awaitConnected(20_000))
            {
                throw new IllegalStateException("no session within 20 s");
            }
            awaitStandbyCaughtUp(admin);
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupS);
            final long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
            long nextSend = start;
            long nextSample = measureFrom;
            boolean measuring = false;
            while (System.nanoTime() < end)
            {
                final long now = System.nanoTime();
                if (!measuring && now >= measureFrom)
                {
                    measuring = true;
                    linkBytesAtStart = cluster.zoneLinkBytes();
                }
                if (now >= nextSend && client.offer(message, 0, size) >= 0)
                {
                    nextSend += intervalNs;
                    sent += measuring ? 1 : 0;
                }
                client.poll();
                if (now >= nextSample)
                {
                    nextSample = now + TimeUnit.MILLISECONDS.toNanos(50);
                    for (final AdminClient.Status s : admin.status(20).values())
                    {
                        for (final AdminClient.PeerLag peer : s.peers())
                        {
                            if (!peer.voting())
                            {
                                lagMs.recordValue(Math.min(60_000, TimeUnit.NANOSECONDS.toMillis(peer.lagNs())));
                                maxLagBytes = Math.max(maxLagBytes, peer.lagBytes());
                            }
                        }
                    }
                }
            }
        }
        final long linkBytes = cluster.zoneLinkBytes() - linkBytesAtStart;
        System.out.printf(Locale.ROOT, "lockstep mode=standby_lag rate=%d delay_ms=%d standbys=%d samples=%d " +
            "lag_ms_p50=%d lag_ms_p99=%d lag_ms_max=%d lag_bytes_max=%d zone_link_bytes_per_message=%d%n", rate,
            delayMs, standbys, lagMs.getTotalCount(), lagMs.getValueAtPercentile(50), lagMs.getValueAtPercentile(99),
            lagMs.getMaxValue(), maxLagBytes, 0 == sent ? 0 : linkBytes / sent);
    }
}
