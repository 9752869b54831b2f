package io.lockstep.simulation;

import io.lockstep.consensus.MemberMetrics;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * One seed of frames lost on several members at once: a cluster under load (half the time with a member cut off and
 * behind, half the time with the leader's disk slow, so that logs and promises differ), then one, two or three
 * members crash together and each finds a damaged frame at restart, at a random position: among its last few KiB
 * half the time, anywhere in its log otherwise. The invariants are checked after every step. Then either the cluster
 * serves again (new appends acknowledged, every member converges, every acknowledged append where its ack said), or
 * it refuses to: that is allowed only when a majority may have acknowledged frames that no member's log holds.
 */
final class LostFramesRun
{
    /** Steps (about 40 election timeouts) after which a cluster that elected no one is counted as refusing. */
    private static final int SERVE_WITHIN_STEPS = 10_000;

    private final SimCluster cluster;
    private final int damagedMembers;
    boolean served;
    /** Refused, and some committed frame is beyond every member's log: certainly lost, not only maybe. */
    boolean committedLost;
    /** Refused, and some member said that frames it owes are held nowhere. */
    boolean heldNowhereNamed;
    long releases;

    LostFramesRun(final long seed, final int memberCount, final int damagedMembers)
    {
        this.cluster = new SimCluster(seed, SimCluster.allVoting(memberCount), TimeUnit.MILLISECONDS.toNanos(3));
        this.damagedMembers = damagedMembers;
    }

    void run()
    {
        cluster.runUntil(() -> cluster.driver.acked.size() >= 10, 20_000, true, "first appends acknowledged");
        shapeTheLogs();
        final int n = cluster.memberCount;
        final boolean[] damaged = new boolean[n];
        for (int k = 0; k < damagedMembers; k++)
        {
            int i = cluster.random.nextInt(n);
            while (damaged[i])
            {
                i = (i + 1) % n;
            }
            damaged[i] = true;
        }
        for (int i = 0; i < n; i++)
        {
            if (damaged[i])
            {
                final long start = cluster.log(i).startPosition();
                final long durable = cluster.log(i).durablePosition();
                final long from = cluster.random.nextBoolean() ? Math.max(start, durable - 4096) : start;
                cluster.crashDamagedAt(i, from + (long)(cluster.random.nextDouble() * (durable - from)));
            }
        }
        cluster.healAll();
        for (int i = 0; i < n; i++)
        {
            if (!cluster.isUp(i))
            {
                cluster.start(i);
            }
        }

        final int ackedBefore = cluster.driver.acked.size();
        for (int k = 0; k < SERVE_WITHIN_STEPS && !served; k++)
        {
            cluster.step(true);
            served = cluster.driver.acked.size() >= ackedBefore + 10;
        }
        for (int i = 0; i < n; i++)
        {
            releases += cluster.agent(i).metrics().get(MemberMetrics.OWED_FRAMES_RELEASED);
        }
        if (served)
        {
            cluster.runUntil(cluster::converged, 40_000, false, "the cluster converges after the damage");
            cluster.checkAckedEntriesCommitted(cluster.leader());
            return;
        }
        checkRefusalIsNeeded();
    }

    /** Logs and promises that differ: a member cut off and behind, or a leader whose disk syncs late. */
    private void shapeTheLogs()
    {
        final int leader = cluster.leader();
        if (cluster.random.nextBoolean())
        {
            final int behind = (leader + 1 + cluster.random.nextInt(cluster.memberCount - 1)) % cluster.memberCount;
            cluster.network.partition(behind, 1);
        }
        if (leader >= 0 && cluster.random.nextBoolean())
        {
            cluster.log(leader).slowDisk((1 + cluster.random.nextInt(4)) * SimCluster.ELECTION_TIMEOUT_NS / 8,
                cluster::nowNs);
        }
        final long until = cluster.step() + 500 + cluster.random.nextInt(2500);
        cluster.runUntil(() -> cluster.step() >= until, 4000, true, "load before the damage");
    }

    /**
     * A refusal must be one the protocol cannot avoid: a majority promised (may have acknowledged) frames past the
     * end of every member's log. Such frames may have been committed, and no member can send them.
     */
    private void checkRefusalIsNeeded()
    {
        final long[] promised = new long[cluster.memberCount];
        long maxLog = 0;
        for (int i = 0; i < cluster.memberCount; i++)
        {
            promised[i] = cluster.log(i).promisedPosition();
            maxLog = Math.max(maxLog, cluster.log(i).appendedPosition());
            heldNowhereNamed |= 1 == cluster.agent(i).metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE);
        }
        Arrays.sort(promised);
        final long promisedByAMajority = promised[cluster.memberCount - (cluster.memberCount / 2 + 1)];
        if (promisedByAMajority <= maxLog)
        {
            throw cluster.violation("no leader within " + SERVE_WITHIN_STEPS + " steps although a member's log " +
                "reaches " + maxLog + ", as far as a majority promised (" + promisedByAMajority + ")");
        }
        committedLost = cluster.historyEnd() > maxLog;
    }
}
