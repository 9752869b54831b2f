package io.lockstep.testkit;

import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.JvmOptions;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.client.SessionClient;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.simulation.SeedProgress;
import io.lockstep.simulation.SeedReplay;
import io.lockstep.simulation.SimServiceCluster;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Your service under the simulation, in one thread, from a seed: three members with crashes (torn and lost
 * writes), bounces, lost and damaged snapshots, partitions, one-way loss, flapping links and clock steps, all
 * chosen by the seed, so that any failure replays exactly. After every step the members at the same log position
 * must hold the same state (your {@link ClusteredService#stateHash()} and the sessions, timers and egress around
 * it): a service that reads the wall clock, iterates a {@code HashMap} of objects with identity hashes, or forgets a
 * field in its snapshot is caught here, long before production. Nothing like it exists for Aeron, Ratis or
 * SOFAJRaft users.
 * <pre>{@code
 * @Test
 * void ordersSurviveEveryFault()
 * {
 *     ServiceSimulation.forSeeds("matching engine", 1, 500, seed ->
 *     {
 *         final ServiceSimulation.Run run = ServiceSimulation.start(seed, 2, MyEngine::new, true);
 *         final ClusterClient trader = run.client(0, listener);  // the client a real cluster's clients use
 *         for (int step = 0; step < 3000; step++)
 *         {
 *             run.step(true);                          // faults on
 *             trader.offer(...);                       // your workload, decided with run.random()
 *             trader.poll();
 *         }
 *         run.quiesce(trader);                         // faults off, everything heals
 *         ... assert what your clients saw ...
 *     });
 * }
 * }</pre>
 * A failing seed is run again at once in the same JVM: the error says whether it failed again (a bug the seed
 * replays: run that one seed, {@code forSeeds(name, seed, 1, run)}) or not (something outside the seed reached the
 * run). For the snapshot side, see also
 * {@code SnapshotReplayCheck}: snapshot then replay must equal a full replay.
 */
public final class ServiceSimulation
{
    /** A seed running longer than this is named on the console, again every so long. */
    static final long SLOW_SEED_SECONDS = 10;

    private ServiceSimulation()
    {
    }

    /** The seed running, and since when. */
    private record SeedStart(long seed, long startNs)
    {
    }

    /** One seed's work. */
    @FunctionalInterface
    public interface SeedRun
    {
        void run(long seed) throws Exception;
    }

    /**
     * Run seeds {@code first} to {@code first + count - 1}, stopping at the first that fails.
     *
     * @throws AssertionError naming the seed and whether it replays, with the failure as its cause.
     */
    public static void forSeeds(final String name, final long first, final int count, final SeedRun run)
    {
        // Before any seed: a JVM without Agrona's option would otherwise fail seed 1 as if the service were wrong.
        JvmOptions.check();
        // A simulated member logs what a real one would (elections, recoveries, refusals): dozens of lines a seed.
        // Only warnings and errors are shown while the seeds run, unless -Dlockstep.sim.verbose=true.
        final Logger lockstep = Logger.getLogger("io.lockstep");
        final Level level = lockstep.getLevel();
        if (!Boolean.getBoolean("lockstep.sim.verbose"))
        {
            lockstep.setLevel(Level.WARNING);
        }
        try
        {
            runSeeds(name, first, count, run);
        }
        finally
        {
            lockstep.setLevel(level);
        }
    }

    private static void runSeeds(final String name, final long first, final int count, final SeedRun run)
    {
        final SeedProgress progress = new SeedProgress(name);
        final AtomicReference<SeedStart> running = new AtomicReference<>(new SeedStart(first, System.nanoTime()));
        // A seed that runs far longer than the others (a workload that never ends, a wait with no bound) would
        // otherwise look like a hung build: say which seed, every SLOW_SEED_SECONDS.
        final Thread watchdog = new Thread(() ->
        {
            try
            {
                while (true)
                {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(SLOW_SEED_SECONDS));
                    // One read of seed and start together: never the next seed's number with this one's time.
                    final SeedStart seed = running.get();
                    final long runningS = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - seed.startNs());
                    if (runningS >= SLOW_SEED_SECONDS)
                    {
                        System.out.printf("%s: seed %d has run for %d s (a wait without a bound in the test?); " +
                            "replay it alone with that seed as the first%n", name, seed.seed(), runningS);
                    }
                }
            }
            catch (final InterruptedException ex)
            {
                // The seeds are done.
            }
        }, "lockstep-simulation-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try
        {
            for (long seed = first; seed < first + count; seed++)
            {
                running.set(new SeedStart(seed, System.nanoTime()));
                try
                {
                    run.run(seed);
                }
                catch (final Throwable t)
                {
                    final long failed = seed;
                    throw new AssertionError(name + " failed at seed " + seed + " (" +
                        SeedReplay.again(() -> run.run(failed)) + "); run that seed alone with forSeeds(\"" +
                        name + "\", " + seed + ", 1, ...). A seed that fails again is a bug the seed replays; one " +
                        "that passes alone points at state outside the service (a wall clock, unseeded randomness, " +
                        "a static field)", t);
                }
                progress.seedDone(seed);
            }
        }
        finally
        {
            watchdog.interrupt();
        }
        System.out.printf("%s: %d seeds passed (%d to %d) in %.1f s%n", name, count, first, first + count - 1,
            progress.seconds());
    }

    /**
     * @param seed      the run's seed.
     * @param clients   client endpoints to provide (use {@link Run#client}).
     * @param service   makes your service (per member start, and again when a snapshot is installed).
     * @param snapshots true to take snapshots every few KiB, purge the log and install snapshots on laggards.
     * @return the running simulation.
     */
    public static Run start(
        final long seed, final int clients, final Supplier<ClusteredService> service, final boolean snapshots)
    {
        // The members' production bound on egress kept per session: gaps happen when they would in production.
        return new Run(new SimServiceCluster(seed, clients, service, snapshots,
            ClusterNode.EGRESS_BUFFER_BYTES));
    }

    /** Client timing in simulated time: keepalive 20 ms, silence 150 ms, 256 unacknowledged, 64 KiB messages. */
    private static final ClusterClient.Settings SIMULATED_TIMING = new ClusterClient.Settings(20, 150, 256, 64 * 1024);

    /** A running simulation: step it, drive clients, then quiesce. */
    public static final class Run
    {
        private final SimServiceCluster cluster;

        Run(final SimServiceCluster cluster)
        {
            this.cluster = cluster;
        }

        /**
         * A client on simulated endpoint {@code c}: the same {@link ClusterClient} a real cluster's clients use, so
         * one driver serves both. It runs on simulated time, with timeouts suited to it: {@code poll()} it after each
         * {@link #step}, and poll until {@code isConnected()} rather than calling {@code awaitConnected}, which waits
         * in real time.
         *
         * @param c        the endpoint, from 0 to the number of clients the run was started with, less one.
         * @param listener told of each egress message.
         * @return the client.
         */
        public ClusterClient client(final int c, final ClusterClient.EgressListener listener)
        {
            return ClusterClient.over(cluster.clientTransport(c), cluster.memberIds(), listener, cluster::nowNs,
                SIMULATED_TIMING);
        }

        /**
         * A client on simulated endpoint {@code c}, as a bare session: step it after each {@link #step} with
         * {@code doWork(run.nowNs())}. {@link #client(int, ClusterClient.EgressListener)} gives the client a real
         * cluster's code uses.
         */
        public SessionClient client(final int c, final SessionClient.Listener listener)
        {
            return new SessionClient(cluster.clientTransport(c), cluster.memberIds(), listener, 20_000_000L,
                150_000_000L, 256, 64 * 1024);
        }

        /**
         * One step of simulated time (1 ms), with faults when asked; checks the members' states at equal positions.
         * {@code step(false)} starts no new fault, but those already in place (a member down, a partition) stay
         * until {@link #quiesce} heals them.
         */
        public void step(final boolean faults)
        {
            cluster.step(faults);
        }

        /**
         * Heal the network, start every member that is down, and step (faults off) until every member has applied
         * the same log, checking on the way.
         *
         * @param clients stepped along, so that their retries reach the cluster.
         * @throws AssertionError if that takes more than 60 simulated seconds.
         */
        public void quiesce(final SessionClient... clients)
        {
            quiesceWith(() ->
            {
                for (final SessionClient c : clients)
                {
                    c.doWork(cluster.nowNs());
                }
            });
        }

        /**
         * {@link #quiesce(SessionClient...)} for the clients of {@link #client(int, ClusterClient.EgressListener)}.
         *
         * @param first the clients to poll along, so that their retries reach the cluster.
         * @param more  the others.
         */
        public void quiesce(final ClusterClient first, final ClusterClient... more)
        {
            quiesceWith(() ->
            {
                first.poll();
                for (final ClusterClient c : more)
                {
                    c.poll();
                }
            });
        }

        private void quiesceWith(final Runnable pollClients)
        {
            cluster.healAndStartAll();
            final long deadline = cluster.nowNs() + 60_000_000_000L;
            do
            {
                cluster.step(false);
                pollClients.run();
                if (cluster.nowNs() > deadline)
                {
                    throw new AssertionError("seed " + cluster.seed() + ": members did not converge within 60 " +
                        "simulated seconds after healing: " + cluster.describe());
                }
            }
            while (!cluster.membersAgree());
        }

        /** @return the run's randomness: decide your workload with it, so the seed decides everything. */
        public Random random()
        {
            return cluster.random();
        }

        /** @return simulated time, ns. */
        public long nowNs()
        {
            return cluster.nowNs();
        }

        /** @return the simulated cluster itself, for checks beyond these. */
        public SimServiceCluster cluster()
        {
            return cluster;
        }
    }
}
