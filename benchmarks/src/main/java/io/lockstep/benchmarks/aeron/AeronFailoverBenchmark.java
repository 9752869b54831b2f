package io.lockstep.benchmarks.aeron;

import io.aeron.cluster.client.AeronCluster;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.lockstep.benchmarks.BenchmarkOptions;
import io.lockstep.benchmarks.EchoTally;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The Aeron Cluster side of {@code bench failover}: the same steady rate and measurement as Lockstep's
 * FailoverBenchmark ({@link EchoTally}), the leader's node process killed with SIGKILL half way. The client is
 * Aeron's own: it follows the new leader, and is reconnected here if it closes; it does not resend what it had
 * offered, so messages in flight at the kill may be lost, which is counted.
 */
public final class AeronFailoverBenchmark
{
    private final EchoTally tally = new EchoTally();

    private AeronFailoverBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final BenchmarkOptions options = BenchmarkOptions.parse(args,
            new BenchmarkOptions(new int[]{ 2000 }, 10, 0, 288, "none", Path.of("target", "bench")));
        try (AeronNodes nodes = new AeronNodes())
        {
            new AeronFailoverBenchmark().run(nodes, options.rates()[0], options.seconds(), options.size());
        }
    }

    private void run(final AeronNodes nodes, final int rate, final int seconds, final int size) throws Exception
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        long sent = 0;
        try (MediaDriver driver = MediaDriver.launchEmbedded(new MediaDriver.Context()
            .threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(new BackoffIdleStrategy())
            .dirDeleteOnStart(true).dirDeleteOnShutdown(true)))
        {
            AeronCluster client = AeronLatencyBenchmark.connect(driver.aeronDirectoryName(), nodes.portBase(),
                (sessionId, timestamp, buffer, offset, length, header) ->
                    tally.echoed(buffer.getLong(offset), System.nanoTime()));
            final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long killAt = start + TimeUnit.SECONDS.toNanos(seconds) / 2;
            final long end = start + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < end && sent < EchoTally.MAX)
            {
                final long now = System.nanoTime();
                if (!tally.hasKilled() && now >= killAt)
                {
                    tally.killing();
                    final Process leader = nodes.process(client.leaderMemberId());
                    leader.destroyForcibly();
                    leader.waitFor(10, TimeUnit.SECONDS);
                    tally.killed(System.nanoTime());
                }
                if (client.isClosed())
                {
                    client.close();
                    client = AeronLatencyBenchmark.connect(driver.aeronDirectoryName(), nodes.portBase(),
                        (sessionId, timestamp, buffer, offset, length, header) ->
                            tally.echoed(buffer.getLong(offset), System.nanoTime()));
                }
                if (now >= start + sent * intervalNs)
                {
                    message.putLong(0, sent);
                    tally.sent(sent, System.nanoTime());
                    if (client.offer(message, 0, size) > 0)
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
            while (tally.received() < sent && System.nanoTime() < drainUntil)
            {
                if (0 == client.pollEgress())
                {
                    LockSupport.parkNanos(20_000);
                }
            }
            client.close();
        }
        tally.report("aeron", rate, size, sent);
    }
}
