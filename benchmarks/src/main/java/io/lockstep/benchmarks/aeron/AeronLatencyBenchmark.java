package io.lockstep.benchmarks.aeron;

import io.aeron.cluster.client.AeronCluster;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * The Aeron Cluster side of {@code bench latency}: three {@link AeronEchoNode} processes and this process as the
 * client, the same open-loop method as Lockstep's benchmark (latency from each message's intended send time),
 * the same histogram, the same CPU% and RSS readings, and one {@code aeron mode=latency ...} line per rate. Runs on
 * its own classpath (aeron-all bundles an older Agrona). Options as LatencyBenchmark: --rates, --seconds, --warmup,
 * --size, --out.
 */
public final class AeronLatencyBenchmark
{
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private volatile boolean measuring;
    private long received;

    private AeronLatencyBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        String rates = "1000,10000";
        int seconds = 10;
        int warmup = 3;
        int size = 288;
        Path out = Path.of("target", "bench");
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--rates" -> rates = args[i + 1];
                case "--seconds", "--duration" -> seconds = Integer.parseInt(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--size" -> size = Integer.parseInt(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(out);
        final Path root = Files.createTempDirectory("aeron-latency");
        final int portBase = 20_000 + (int)(ProcessHandle.current().pid() % 1000) * 40;
        final List<Process> nodes = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                nodes.add(startNode(i, root, portBase));
            }
            System.out.printf("aeron: 3 members (Aeron Cluster 1.46.7, echo service, shared driver thread, backoff " +
                "idle, no fsync, leader heartbeat timeout 1 s, UDP loopback), 1 client, %d-byte messages, %d s " +
                "warm-up, %d s per rate%n", size, warmup, seconds);
            for (final String rate : rates.split(","))
            {
                new AeronLatencyBenchmark().run(nodes, portBase, Integer.parseInt(rate.trim()), size, warmup, seconds,
                    out);
            }
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

    static Process startNode(final int id, final Path root, final int portBase) throws Exception
    {
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"),
            AeronEchoNode.class.getName(), Integer.toString(id), root.toString(), Integer.toString(portBase))
            .redirectErrorStream(true).start();
        final CountDownLatch ready = new CountDownLatch(1);
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader r = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = r.readLine()))
                {
                    if (line.startsWith("aeron node " + id + " ready"))
                    {
                        ready.countDown();
                    }
                    else if (line.contains("Exception") || line.contains("ERROR"))
                    {
                        System.out.println("aeron node " + id + ": " + line);
                    }
                }
            }
            catch (final Exception ignore)
            {
                // ended
            }
        }, "aeron-node-" + id);
        pump.setDaemon(true);
        pump.start();
        if (!ready.await(60, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("aeron node " + id + " not ready in 60 s");
        }
        return process;
    }

    private void run(final List<Process> nodes, final int portBase, final int rate, final int size, final int warmupS,
        final int seconds, final Path out) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        try (MediaDriver driver = MediaDriver.launchEmbedded(new MediaDriver.Context()
                .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new BackoffIdleStrategy())
                .dirDeleteOnStart(true).dirDeleteOnShutdown(true));
            AeronCluster client = connect(driver.aeronDirectoryName(), portBase))
        {
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupS);
            final long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
            final io.lockstep.benchmarks.LatencyReport report = new io.lockstep.benchmarks.LatencyReport("aeron",
                new long[]{ nodes.get(0).pid(), nodes.get(1).pid(), nodes.get(2).pid(), ProcessHandle.current().pid() });
            long index = 0;
            long sentMeasured = 0;
            long receivedAtMeasure = 0;
            while (true)
            {
                final long now = System.nanoTime();
                if (!measuring && now >= measureFrom)
                {
                    measuring = true;
                    histogram.reset();
                    receivedAtMeasure = received;
                    report.start(now);
                }
                if (now >= end)
                {
                    break;
                }
                final long due = start + index * intervalNs;
                if (now >= due)
                {
                    message.putLong(0, due);
                    if (client.offer(message, 0, size) > 0)
                    {
                        index++;
                        sentMeasured += measuring ? 1 : 0;
                    }
                }
                if (0 == client.pollEgress() && start + index * intervalNs - System.nanoTime() > 100_000)
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            report.finish(histogram, rate, size, received - receivedAtMeasure, sentMeasured, out, "");
        }
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
                        received++;
                        if (measuring)
                        {
                            histogram.recordValue(Math.max(0, System.nanoTime() - buffer.getLong(offset)));
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
}
