package io.lockstep.benchmarks;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.DevCertificates;
import io.lockstep.cluster.transport.TlsFiles;
import io.lockstep.consensus.node.IdleSettings;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.EchoService;
import io.lockstep.localcluster.LocalCluster;
import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Round-trip latency at fixed rates: three member processes on loopback running the echo service, this process as
 * the client. Open loop: message i is due at start + i / rate, and its latency is measured from that intended time
 * (so a stall delays every message behind it, as a real client would see: coordinated omission corrected).
 * Prints percentiles, the achieved rate, CPU% and RSS of each process, and the loopback floor (two TCP round trips,
 * measured here); saves each run's histogram as an .hdr log. Every result is also one key=value line.
 * <p>
 * {@code LatencyBenchmark [--rates 1000,10000] [--seconds 10] [--warmup 3] [--size 288] [--durability none|batch]
 * [--out DIR] [--tls] [--search N --high R --limit-us U] [--delay-ms D] [--timeouts lan|wan]}: with
 * {@code --search}, the rates are found by {@link RateSearch} instead of given; with {@code --delay-ms}, every member
 * is in a zone of its own, {@code D} ms each way from the others ({@link LocalCluster#delayEveryLink}), and the
 * client reaches each directly, as one beside the leader does.
 * <p>
 * {@code --tls}: every link encrypted ({@code lockstep.tls.links=all}, a development certificate made for the run),
 * the client too; results are labelled {@code lockstep-tls}. {@code bin/lockstep bench tls} runs both and compares.
 */
public final class LatencyBenchmark
{
    /** Rate of the pre-warm: fast enough to get the members' hot paths compiled in seconds, far from saturation. */
    private static final int PREWARM_RATE = 10_000;
    private static final long SLOW_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    /** How late this client itself sent (from each message's intended time): part of every latency it records. */
    private final Histogram sendLate = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    /**
     * Messages over 1 ms, by the second of the window they were due in: whether the tail is spread over the run
     * (queueing) or sits in a few seconds (a rollover, a snapshot, a stall). Sized before the run; no allocation.
     */
    private long[] slowBySecond = new long[0];
    private long measureFromNs;
    private long received;
    /** The authority the members' certificates are signed by, or null: links in the clear. */
    private final Path tlsAuthority;

    private LatencyBenchmark(final Path tlsAuthority)
    {
        this.tlsAuthority = tlsAuthority;
    }

    public static void main(final String[] args) throws Exception
    {
        Logger.getLogger("io.lockstep").setLevel(Level.WARNING);
        final boolean tls = Arrays.asList(args).contains("--tls");
        final ZoneOptions zones = ZoneOptions.parse(Arrays.stream(args).filter(a -> !"--tls".equals(a))
            .toArray(String[]::new));
        final RateSearch search = RateSearch.parse(zones.rest());
        final BenchmarkOptions options = BenchmarkOptions.parse(search.rest(),
            new BenchmarkOptions(new int[]{ 1000, 10000 }, 10, 3, 288, "none", Path.of("target", "bench"), 10));
        final int size = options.size();
        final Path out = options.out();
        Files.createDirectories(out);
        final double floorUs = loopbackFloorUs(size);
        System.out.printf(Locale.ROOT, "loopback floor (two TCP round trips of %d bytes, p50): %.1f us%n", size,
            floorUs);
        System.out.printf(Locale.ROOT, "loopback mode=floor size=%d p50_us=%.1f%n", size, floorUs);

        final Path root = Files.createTempDirectory("lockstep-latency");
        try (LocalCluster cluster = new LocalCluster(root, 3, options.durability(), 64 * 1024 * 1024,
            EchoService.class.getName()))
        {
            // Members share the machine's cores with each other and the client, and are never saturated here: the
            // setting for that case (docs/reference/configuration.md), said in the line below.
            cluster.configureAll(IdleSettings.BACKGROUND_NICE, "19");
            final Path authority = tls ? encryptEveryLink(cluster, root.resolve("tls")) : null;
            zones.apply(cluster, size);
            int rehearsed = 0;
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
                rehearsed += cluster.output(i).contains("rehearsed in") ? 1 : 0;
            }
            // Members in plain JVMs (bench jit) rehearse before they serve: say whether they did, or the comparison
            // would measure members that failed to.
            System.out.printf("lockstep: members that rehearsed before serving: %d of 3%n", rehearsed);
            System.out.printf("lockstep: 3 members (echo service, %s, durability %s, selector idle, background " +
                "threads at nice 19%s), " +
                "1 client, %d-byte messages, %d s warm-up, %d s per rate%n", zones.describe(), options.durability(),
                tls ? ", every link TLS 1.3" : "", size, options.warmup(), options.seconds());
            if (options.prewarm() > 0)
            {
                System.out.printf("lockstep: pre-warm %d s at %d msg/s, not measured%n", options.prewarm(),
                    PREWARM_RATE);
                new LatencyBenchmark(authority).run(cluster, PREWARM_RATE, options.size(), options.prewarm(), 0,
                    options.out());
            }
            if (search.asked())
            {
                search.run(null == authority ? "lockstep" : "lockstep-tls", rate ->
                    new LatencyBenchmark(authority).run(cluster, rate, size, options.warmup(), options.seconds(), out));
                return;
            }
            for (final int rate : options.rates())
            {
                new LatencyBenchmark(authority).run(cluster, rate, size, options.warmup(), options.seconds(), out);
                zones.printRelay(rate, size, options.seconds());
            }
        }
        finally
        {
            TempDirs.deleteTree(root);
        }
    }

    /** @return the measured window's p99, in nanoseconds (0 for a pre-warm). */
    private long run(final LocalCluster cluster, final int rate, final int size, final int warmupS, final int seconds,
        final Path out) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        try (ClusterClient client = null == tlsAuthority ? ClusterClient.connect(cluster.members(), this::onEcho) :
            ClusterClient.connect(cluster.members(), this::onEcho, ClusterClient.Settings.DEFAULTS, new byte[0],
                TlsFiles.trusting(tlsAuthority)))
        {
            if (!client.awaitConnected(20_000))
            {
                throw new IllegalStateException("no session within 20 s");
            }
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupS);
            final long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
            slowBySecond = new long[seconds + 1];
            measureFromNs = measureFrom;
            final LatencyReport report = new LatencyReport(null == tlsAuthority ? "lockstep" : "lockstep-tls",
                new long[]{ cluster.pid(0), cluster.pid(1), cluster.pid(2), ProcessHandle.current().pid() });
            final SendPacer.Client paced = new SendPacer.Client()
            {
                public boolean offer(final UnsafeBuffer m, final int length)
                {
                    return client.offer(m, 0, length) >= 0;
                }

                public int poll()
                {
                    return client.poll();
                }
            };
            final long warmedUpTo = SendPacer.pace(paced, message, size, start, intervalNs, 0, measureFrom, sendLate);
            histogram.reset();
            sendLate.reset();
            Arrays.fill(slowBySecond, 0);
            final long receivedAtMeasure = received;
            report.start(System.nanoTime());
            final long sentMeasured =
                SendPacer.pace(paced, message, size, start, intervalNs, warmedUpTo, end, sendLate) - warmedUpTo;
            // Leader changes during the run: each election is an outage of up to the election timeout.
            long term = -1;
            try (AdminClient admin = null == tlsAuthority ? cluster.adminClient() :
                new AdminClient(cluster.members(), cluster.toolSecret(),
                    TlsFiles.trusting(tlsAuthority)))
            {
                for (final AdminClient.Status s : admin.status(1000).values())
                {
                    term = Math.max(term, s.term());
                }
            }
            if (0 == seconds)
            {
                return 0; // the pre-warm
            }
            report.finish(histogram, rate, size, received - receivedAtMeasure, sentMeasured, out,
                " term=" + term + " client_gap_resumes=" + client.gapResumes() + " send_late_p99_us=" +
                sendLate.getValueAtPercentile(99) / 1000 + " over_1ms_by_second=" + slowBySecond());
            return histogram.getValueAtPercentile(99);
        }
    }

    /**
     * @return the authority's certificate, which the client trusts.
     */
    private static Path encryptEveryLink(final LocalCluster cluster, final Path dir) throws IOException
    {
        DevCertificates.write(dir, List.of("127.0.0.1", "localhost"));
        cluster.configureAll("lockstep.tls.links", "all");
        cluster.configureAll("lockstep.tls.certificate.file", dir.resolve(DevCertificates.CERTIFICATE).toString());
        cluster.configureAll("lockstep.tls.key.file", dir.resolve(DevCertificates.KEY).toString());
        cluster.configureAll("lockstep.tls.trust.file", dir.resolve(DevCertificates.AUTHORITY).toString());
        return dir.resolve(DevCertificates.AUTHORITY);
    }

    private void onEcho(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        received++;
        final long due = buffer.getLong(offset);
        final long latency = Math.max(0, System.nanoTime() - due);
        histogram.recordValue(latency);
        if (latency > SLOW_NS)
        {
            final long second = Math.max(0, due - measureFromNs) / 1_000_000_000L;
            slowBySecond[(int)Math.min(second, slowBySecond.length - 1)]++;
        }
    }

    private String slowBySecond()
    {
        final StringBuilder s = new StringBuilder();
        for (int i = 0; i < slowBySecond.length - 1; i++)
        {
            s.append(i == 0 ? "" : ",").append(slowBySecond[i]);
        }
        return s.toString();
    }

    /**
     * Two TCP round trips on loopback: the least a client-to-leader-to-follower-and-back exchange can take here.
     */
    private static double loopbackFloorUs(final int size) throws Exception
    {
        final Histogram rtt = new Histogram(TimeUnit.SECONDS.toNanos(1), 3);
        try (ServerSocket server = new ServerSocket(0))
        {
            final Thread echo = new Thread(() -> ZoneFloor.echo(server, size), "loopback-echo");
            echo.setDaemon(true);
            echo.start();
            try (Socket s = new Socket("127.0.0.1", server.getLocalPort()))
            {
                s.setTcpNoDelay(true);
                final DataInputStream in = new DataInputStream(s.getInputStream());
                final DataOutputStream o = new DataOutputStream(s.getOutputStream());
                final byte[] b = new byte[size];
                for (int i = 0; i < 20_000; i++)
                {
                    final long t0 = System.nanoTime();
                    o.write(b);
                    o.flush();
                    in.readFully(b);
                    if (i >= 5_000)
                    {
                        rtt.recordValue(System.nanoTime() - t0);
                    }
                }
            }
        }
        return 2 * rtt.getValueAtPercentile(50) / 1000.0;
    }
}
