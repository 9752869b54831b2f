package io.lockstep.benchmarks.aeron;

import io.aeron.cluster.client.AeronCluster;
import io.aeron.cluster.client.EgressListener;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.Header;
import io.lockstep.benchmarks.BenchmarkOptions;
import io.lockstep.benchmarks.LatencyReport;
import io.lockstep.benchmarks.RateSearch;
import io.lockstep.benchmarks.SendPacer;
import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Aeron Cluster side of {@code bench latency}: three {@link AeronEchoNode} processes and this process as the
 * client, the same open-loop method as Lockstep's benchmark (latency from each message's intended send time),
 * the same histogram, the same CPU% and RSS readings, and one {@code aeron mode=latency ...} line per rate. Runs on
 * its own classpath (aeron-all bundles an older Agrona). Options as LatencyBenchmark: --rates, --seconds, --warmup,
 * --size, --out.
 */
public final class AeronLatencyBenchmark
{
    /** Rate of the pre-warm: fast enough to get the members' hot paths compiled in seconds, far from saturation. */
    private static final int PREWARM_RATE = 10_000;
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    /** How late this client itself sent (from each message's intended time): part of every latency it records. */
    private final Histogram sendLate = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private long received;

    private AeronLatencyBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final RateSearch search = RateSearch.parse(args);
        final BenchmarkOptions options = BenchmarkOptions.parse(search.rest(),
            new BenchmarkOptions(new int[]{ 1000, 10000 }, 10, 3, 288, "none", Path.of("target", "bench"), 10));
        Files.createDirectories(options.out());
        try (AeronNodes nodes = new AeronNodes(options.durability()))
        {
            System.out.printf("aeron: 3 members (Aeron Cluster 1.46.7, echo service, shared driver thread, backoff " +
                "idle, %s, leader heartbeat timeout 1 s, UDP loopback), 1 client, %d-byte messages, %d s " +
                "warm-up, %d s per rate%n", "batch".equals(options.durability()) ? "file sync level 1 (archive and " +
                "consensus module)" : "no fsync", options.size(), options.warmup(), options.seconds());
            if (options.prewarm() > 0)
            {
                System.out.printf("aeron: pre-warm %d s at %d msg/s, not measured%n", options.prewarm(),
                    PREWARM_RATE);
                new AeronLatencyBenchmark().run(nodes, PREWARM_RATE, options.size(), options.prewarm(), 0,
                    options.out());
            }
            if (search.asked())
            {
                search.run("aeron", rate -> new AeronLatencyBenchmark().run(nodes, rate, options.size(),
                    options.warmup(), options.seconds(), options.out()));
                return;
            }
            for (final int rate : options.rates())
            {
                new AeronLatencyBenchmark().run(nodes, rate, options.size(), options.warmup(), options.seconds(),
                    options.out());
            }
        }
    }

    /** @return the measured window's p99, in nanoseconds (0 for a pre-warm). */
    private long run(final AeronNodes nodes, final int rate, final int size, final int warmupS, final int seconds,
        final Path out) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        try (MediaDriver driver = MediaDriver.launchEmbedded(new MediaDriver.Context()
                .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new BackoffIdleStrategy())
                .dirDeleteOnStart(true).dirDeleteOnShutdown(true));
            AeronCluster client = connect(driver.aeronDirectoryName(), nodes.portBase(), this::onEcho))
        {
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupS);
            final long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
            final LatencyReport report = new LatencyReport("aeron", nodes.pidsWithClient());
            final SendPacer.Client paced = new SendPacer.Client()
            {
                public boolean offer(final UnsafeBuffer m, final int length)
                {
                    return client.offer(m, 0, length) > 0;
                }

                public int poll()
                {
                    return client.pollEgress();
                }
            };
            final long warmedUpTo = SendPacer.pace(paced, message, size, start, intervalNs, 0, measureFrom, sendLate);
            histogram.reset();
            sendLate.reset();
            final long receivedAtMeasure = received;
            report.start(System.nanoTime());
            final long sentMeasured =
                SendPacer.pace(paced, message, size, start, intervalNs, warmedUpTo, end, sendLate) - warmedUpTo;
            if (0 == seconds)
            {
                return 0; // the pre-warm
            }
            report.finish(histogram, rate, size, received - receivedAtMeasure, sentMeasured, out,
                " send_late_p99_us=" + sendLate.getValueAtPercentile(99) / 1000);
            return histogram.getValueAtPercentile(99);
        }
    }

    private void onEcho(final long sessionId, final long timestamp, final DirectBuffer buffer, final int offset,
        final int length, final Header header)
    {
        received++;
        histogram.recordValue(Math.max(0, System.nanoTime() - buffer.getLong(offset)));
    }

    /**
     * Connect Aeron's client to the nodes, retrying while the cluster elects its first leader (bounded: 60 s).
     */
    static AeronCluster connect(final String aeronDir, final int portBase, final EgressListener listener)
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
                    .egressListener(listener));
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
}
