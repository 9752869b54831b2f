package io.lockstep.benchmarks;

import io.lockstep.localcluster.LocalCluster;

import java.util.ArrayList;
import java.util.List;

/**
 * Where the members are: {@code --delay-ms D} puts each in a zone of its own, {@code D} ms each way from the others
 * ({@link LocalCluster#delayEveryLink}; the client reaches each directly), and {@code --timeouts lan|wan} picks the
 * members' timeout profile. Taken out of the arguments before the benchmark's own.
 *
 * @param delayMs  added each way between members; 0 for none.
 * @param timeouts the members' timeout profile.
 * @param rest     the arguments that are not these.
 */
record ZoneOptions(long delayMs, String timeouts, String[] rest)
{
    static ZoneOptions parse(final String[] args)
    {
        final List<String> rest = new ArrayList<>();
        long delayMs = 0;
        String timeouts = "lan";
        for (int i = 0; i < args.length; i++)
        {
            if ("--delay-ms".equals(args[i]) && i + 1 < args.length)
            {
                delayMs = Long.parseLong(args[++i]);
            }
            else if ("--timeouts".equals(args[i]) && i + 1 < args.length)
            {
                timeouts = args[++i];
            }
            else
            {
                rest.add(args[i]);
            }
        }
        if (delayMs < 0 || !("lan".equals(timeouts) || "wan".equals(timeouts)))
        {
            throw new IllegalArgumentException("--delay-ms takes a number of milliseconds, --timeouts lan or wan");
        }
        return new ZoneOptions(delayMs, timeouts, rest.toArray(String[]::new));
    }

    /** Configure the cluster (before starting it); with a delay, measure and print the floor a commit has. */
    void apply(final LocalCluster cluster, final int size) throws Exception
    {
        cluster.configureAll("lockstep.timeouts", timeouts);
        if (delayMs > 0)
        {
            cluster.delayEveryLink(delayMs);
            ZoneFloor.print(delayMs, size);
        }
    }

    /**
     * Across zones, the floor at a rate: the do-nothing relay with each follower behind the same delay
     * ({@code zone mode=relay}), so the proxies' own cost on this machine is in it, as it is in the members' figures.
     */
    void printRelay(final int rate, final int size, final int seconds) throws Exception
    {
        if (delayMs > 0)
        {
            final LoopbackRelay.Result relay = LoopbackRelay.run(rate, size, seconds, false, delayMs);
            System.out.println(LoopbackRelay.summary(rate, size, relay).replace("loopback mode=relay",
                "zone mode=relay delay_ms=" + delayMs));
        }
    }

    /** @return how the members are placed, for a benchmark's header line. */
    String describe()
    {
        return "timeouts " + timeouts + (delayMs > 0 ? ", each member in a zone of its own (" + delayMs +
            " ms each way between members, the client beside each)" : "");
    }
}
