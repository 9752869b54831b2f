package io.lockstep.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The floor this machine puts under the latency and CPU figures, measured apart from any cluster, so that a target
 * the machine cannot meet shows as such: {@link MachineStalls} (how often and how long a thread that never yields is
 * not running, and the p99 a server that costs nothing would have at each rate) and {@link TcpHopCost} (CPU of one
 * loopback message hop and one log-sized file write, and from them the members' floor per unbatched message) and
 * {@link LoopbackEcho} (the latency of an echo server that does nothing, at each rate, over the same transport) and
 * {@link LoopbackRelay} (the CPU and latency of three processes that do nothing but pass each message as a cluster's
 * members do). With {@code --durability batch}, also the disk's sync ({@link SyncFloor}) and the relay with each
 * process syncing what it gets before it counts, once and twice per round: the floor of a durable commit.
 * <p>
 * {@code FloorBenchmark [--seconds 20] [--size 288] [--rates 1000,5000,10000,20000,40000] [--durability batch]}
 */
public final class FloorBenchmark
{
    private FloorBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final RateSearch search = RateSearch.parse(args);
        final BenchmarkOptions options = BenchmarkOptions.parse(search.rest(), new BenchmarkOptions(
            new int[]{ 1000, 5000, 10000, 20000, 40000 }, 20, 0, 288, "none",
            Path.of("target", "bench")));
        if (search.asked())
        {
            // The do-nothing relay searched as the members are: the highest rate this machine's floor holds.
            search.run("tcp-relay", rate -> LoopbackRelay.run(rate, options.size(), options.seconds()).latency()
                .roundTrip.getValueAtPercentile(99));
            return;
        }
        final MachineStalls stalls = new MachineStalls().measure(options.seconds());
        System.out.printf(Locale.ROOT, "machine stalls (one spinning thread, %d s): %.2f/s over 1 ms, %.1f/s over " +
            "100 us, longest %d us, %.2f%% of the time not running%n", options.seconds(),
            stalls.perSecondOver(1_000_000), stalls.perSecondOver(MachineStalls.GAP_NS), stalls.maxGapNs() / 1000,
            stalls.lostPercent());
        for (final int rate : options.rates())
        {
            System.out.printf(Locale.ROOT, "  p99 of a server that costs nothing, at %d msg/s: %d us%n", rate,
                stalls.floorNs(rate, 99) / 1000);
        }
        System.out.println(stalls.summary(options.rates()));
        final TcpHopCost.Hop hop = TcpHopCost.measure(options.size(), 100_000);
        final double writeNs = TcpHopCost.fileWriteNs(options.size() + 32, 100_000);
        System.out.printf(Locale.ROOT, "loopback hop (write, epoll wake, read; %d bytes): %.1f us CPU, %.0f%% of it " +
            "inside epoll_wait (sleeping and being woken); log write: %.1f us CPU; members' floor for an unbatched " +
            "echo (5 hops, 3 log writes): %.1f us per message%n", options.size(), hop.hopNs() / 1000,
            100 * hop.wakeShare(), writeNs / 1000, (5 * hop.hopNs() + 3 * writeNs) / 1000);
        System.out.println(TcpHopCost.summary(options.size(), hop, writeNs));
        if ("batch".equals(options.durability()))
        {
            SyncFloor.print(Math.min(10, options.seconds()));
        }
        for (final int rate : options.rates())
        {
            final LoopbackEcho.Result echo = LoopbackEcho.run(rate, options.size(), Math.min(10, options.seconds()));
            System.out.printf(Locale.ROOT, "loopback echo that does nothing, %d msg/s: p50 %d us, p99 %d us, " +
                "p99.9 %d us; the client itself sent late by %d us at p99%n", rate,
                echo.roundTrip.getValueAtPercentile(50) / 1000, echo.roundTrip.getValueAtPercentile(99) / 1000,
                echo.roundTrip.getValueAtPercentile(99.9) / 1000, echo.sendLate.getValueAtPercentile(99) / 1000);
            System.out.println(LoopbackEcho.summary(rate, options.size(), echo));
            printRelay(rate, options, false);
            printRelay(rate, options, true);
            if ("batch".equals(options.durability()))
            {
                printDurableRelay(rate, options, 1);
                printDurableRelay(rate, options, 2);
            }
        }
    }

    /**
     * Run the relay durably at a rate and print it: a sentence, and a key=value line whose mode is
     * {@code relay_sync1} or {@code relay_sync2} (syncs per round: the data; the data then a promise).
     */
    private static void printDurableRelay(final int rate, final BenchmarkOptions options, final int syncs)
        throws Exception
    {
        final Path dir = Files.createTempDirectory("lockstep-durable-relay");
        try
        {
            final LoopbackRelay.Result relay = LoopbackRelay.runDurable(rate, options.size(),
                Math.min(10, options.seconds()), syncs, dir);
            System.out.printf(Locale.ROOT, "the relay, each process syncing what it gets before it counts (%s): " +
                "%d msg/s: p50 %d us, p99 %d us, p99.9 %d us, max %d us%n", 1 == syncs ? "one sync per round" :
                "two syncs per round, the data then a promise", rate,
                relay.latency().roundTrip.getValueAtPercentile(50) / 1000,
                relay.latency().roundTrip.getValueAtPercentile(99) / 1000,
                relay.latency().roundTrip.getValueAtPercentile(99.9) / 1000,
                relay.latency().roundTrip.getMaxValue() / 1000);
            System.out.println(LoopbackRelay.summary(rate, options.size(), relay)
                .replace("mode=relay", "mode=relay_sync" + syncs));
        }
        finally
        {
            TempDirs.deleteTree(dir);
        }
    }

    /**
     * Run the do-nothing relay at a rate and print it: as a sentence, and as a key=value line whose mode is
     * {@code relay}, or {@code relay_one_ack} when one follower is silent (the fewest hops a commit needs).
     */
    private static void printRelay(final int rate, final BenchmarkOptions options, final boolean oneAcknowledging)
        throws Exception
    {
        final LoopbackRelay.Result relay = LoopbackRelay.run(rate, options.size(), Math.min(10, options.seconds()),
            oneAcknowledging);
        System.out.printf(Locale.ROOT, "%s, %d msg/s: p50 %d us, p99 %d us; CPU per message: leader %.1f us, " +
            "followers %.1f and %.1f us, all three %.1f us%n", oneAcknowledging ?
            "the same relay with one follower silent (the fewest hops a commit needs)" :
            "loopback relay that does nothing (a leader and two followers, five hops)", rate,
            relay.latency().roundTrip.getValueAtPercentile(50) / 1000,
            relay.latency().roundTrip.getValueAtPercentile(99) / 1000, relay.cpuUsPerMessage(0),
            relay.cpuUsPerMessage(1), relay.cpuUsPerMessage(2), relay.membersCpuUsPerMessage());
        final String summary = LoopbackRelay.summary(rate, options.size(), relay);
        System.out.println(oneAcknowledging ? summary.replace("mode=relay", "mode=relay_one_ack") : summary);
    }
}
