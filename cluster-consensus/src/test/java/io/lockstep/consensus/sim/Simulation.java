package io.lockstep.consensus.sim;

import java.util.concurrent.TimeUnit;

/**
 * A seeded run of a {@link SimCluster} under faults: crashes (with torn last writes), kill-and-restart bounces,
 * partitions and healing, long message stalls, slow members, aimed at the leader half the time. The invariants are
 * checked after every step; then everything is healed and the cluster must converge, with every acknowledged append
 * committed. The same seed replays the same run.
 */
final class Simulation
{
    private final SimCluster cluster;
    private final int intensity;
    int partitions;
    int clockSteps;

    Simulation(final long seed, final int memberCount)
    {
        cluster = new SimCluster(seed, SimCluster.allVoting(memberCount), TimeUnit.MILLISECONDS.toNanos(120));
        // Fault rate varies by seed: calm runs test progress, stormy ones test safety under churn.
        intensity = new int[]{ 1, 3, 10 }[(int)Math.floorMod(seed, 3L)];
    }

    void run(final int faultSteps)
    {
        for (int s = 0; s < faultSteps; s++)
        {
            injectFault();
            cluster.step(cluster.random.nextInt(3) == 0);
        }
        cluster.network.healAll();
        for (int i = 0; i < cluster.memberCount; i++)
        {
            if (!cluster.isUp(i))
            {
                cluster.start(i);
            }
        }
        // New appends until the healed cluster has acknowledged some, then quiet, so the logs can meet.
        final int ackedBefore = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 10, 40_000, true,
            "healed cluster acknowledges new appends");
        cluster.runUntil(cluster::converged, 40_000, false, "healed cluster converges");
        cluster.checkAckedEntriesCommitted(cluster.leader());
    }

    private void injectFault()
    {
        final int roll = cluster.random.nextInt(1000) / intensity;
        // Half the time the fault is aimed at a leader: that is where elections, conflicts and catch-up happen.
        final int leader = cluster.leader();
        final int i = leader >= 0 && cluster.random.nextBoolean() ? leader : cluster.random.nextInt(cluster.memberCount);
        if (roll < 4 && cluster.isUp(i))
        {
            cluster.crash(i);
        }
        else if (roll < 8 && cluster.isUp(i))
        {
            // Killed and restarted at once by a supervisor: only what was durable comes back.
            cluster.crash(i);
            cluster.start(i);
        }
        else if (roll < 18 && !cluster.isUp(i))
        {
            cluster.start(i);
        }
        else if (roll < 22)
        {
            cluster.network.partition(i, 1 + cluster.random.nextInt(2));
            partitions++;
        }
        else if (roll < 32)
        {
            cluster.network.healAll();
        }
        else if (roll < 36)
        {
            cluster.wallClocks[i].step(cluster.random);
            clockSteps++;
        }
    }

    long steps()
    {
        return cluster.step();
    }

    int crashes()
    {
        return cluster.crashes;
    }

    int elections()
    {
        return cluster.elections;
    }

    int acked()
    {
        return cluster.driver.acked.size();
    }

    long historyEnd()
    {
        return cluster.historyEnd();
    }
}
