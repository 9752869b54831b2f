package io.lockstep.simulation;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the cluster simulation over many seeds. Replay one: {@code -Dlockstep.sim.seed=N}; run more:
 * {@code -Dlockstep.sim.seeds=N}; longer fault phases: {@code -Dlockstep.sim.steps=N}.
 */
class ClusterSimulationTest
{
    /** Below this many seeds, a run is not expected to meet every fault class (a replay, a quick check). */
    static final int ENOUGH_SEEDS_FOR_EVERY_FAULT = 20;

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.parse(System.getProperty("lockstep.sim.log", "OFF")));
    }

    @Test
    void safetyHoldsAndTheClusterConvergesForEverySeed()
    {
        final String fixed = System.getProperty("lockstep.sim.seed");
        final int seeds = null != fixed ? 1 : Integer.getInteger("lockstep.sim.seeds", 6000);
        final int steps = Integer.getInteger("lockstep.sim.steps", 2000);
        final long first = null != fixed ? Long.parseLong(fixed) : Long.getLong("lockstep.sim.firstSeed", 1);
        final SeedProgress progress = new SeedProgress("simulation");
        long totalSteps = 0;
        long crashes = 0;
        long partitions = 0;
        long asymmetric = 0;
        long clockSteps = 0;
        long fullDisks = 0;
        long slowDisks = 0;
        long damagedFrames = 0;
        long elections = 0;
        long acked = 0;
        for (long seed = first; seed < first + seeds; seed++)
        {
            final int members = seed % 4 == 0 ? 5 : 3;
            final Simulation simulation = new Simulation(seed, members);
            try
            {
                simulation.run(steps);
            }
            catch (final Throwable t)
            {
                final long failedSeed = seed;
                throw new AssertionError("simulation failed (" + SeedReplay.again(
                    () -> new Simulation(failedSeed, members).run(steps))
                        + "); replay: ./mvnw -pl simulation -am test -Dsurefire.failIfNoSpecifiedTests=false " +
                    "-Dtest=ClusterSimulationTest -Dlockstep.sim.seed=" + seed + " -Dlockstep.sim.steps=" + steps, t);
            }
            totalSteps += simulation.steps();
            crashes += simulation.crashes();
            partitions += simulation.partitions;
            asymmetric += simulation.asymmetricFaults;
            clockSteps += simulation.clockSteps;
            fullDisks += simulation.fullDisks;
            slowDisks += simulation.slowDisks;
            damagedFrames += simulation.damagedFrames;
            elections += simulation.elections();
            acked += simulation.acked();
            progress.seedDone(seed);
        }
        final double seconds = progress.seconds();
        System.out.printf("simulation: %d seeds from %d, %d steps, %d crashes, %d partitions, %d one-way, cut or " +
            "flapping links, %d clock steps, %d full disks, %d slow disks, %d frames damaged while running, " +
            "%d leaders elected, %d acknowledged appends, %.1f s, %.0f seeds/s%n", seeds, first, totalSteps, crashes,
            partitions, asymmetric, clockSteps, fullDisks, slowDisks, damagedFrames, elections, acked, seconds,
            seeds / seconds);
        // A run whose faults stopped firing would pass without testing anything: each class it claims must occur. A
        // replay of one seed, or a handful, need not meet every class.
        if (seeds < ENOUGH_SEEDS_FOR_EVERY_FAULT)
        {
            return;
        }
        assertTrue(crashes > 0, "no member crashed in " + seeds + " seeds");
        assertTrue(partitions > 0, "no partition in " + seeds + " seeds");
        assertTrue(asymmetric > 0, "no one-way, cut or flapping link in " + seeds + " seeds");
        assertTrue(clockSteps > 0, "no clock step in " + seeds + " seeds");
        assertTrue(fullDisks > 0, "no full disk in " + seeds + " seeds");
        assertTrue(slowDisks > 0, "no slow disk in " + seeds + " seeds");
        assertTrue(damagedFrames > 0, "no frame damaged while running in " + seeds + " seeds");
        assertTrue(elections > seeds, "about one election per seed at least: " + elections + " in " + seeds);
    }
}
