package io.lockstep.simulation;

import io.lockstep.archive.ArchiveLog;
import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileElectionState;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consensus over the real archive-log, with small segments, so replication crosses many segment ends: padding
 * frames travel in blocks, followers append them verbatim, the term index counts them, and a restarted leader
 * recovers its log from disk. Every member's log directory must verify and hold the same frames.
 */
class ArchiveLogClusterTest
{
    private static final int SEGMENT = 64 * 1024;
    private static final int MAX_BATCH = 16 * 1024;

    @TempDir
    Path dir;

    private final Random random = new Random(99);
    private final List<Member> members = List.of(
        new Member(0, "sim", 0, true), new Member(1, "sim", 0, true), new Member(2, "sim", 0, true));
    private final ConsensusAgent[] agents = new ConsensusAgent[3];
    private final ArchiveRaftLog[] logs = new ArchiveRaftLog[3];
    private SimNetwork network;
    private SimDriver driver;
    private long nowNs = TimeUnit.SECONDS.toNanos(1);

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    @Test
    void replicationAcrossSegmentEndsAndALeaderRestartLeavesIdenticalLogs()
    {
        network = new SimNetwork(random, new int[]{ 0, 1, 2, Transport.CLIENT_ENDPOINT_BASE },
            TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(2), TimeUnit.MILLISECONDS.toNanos(2));
        network.now(nowNs);
        driver = new SimDriver(network.transportFor(Transport.CLIENT_ENDPOINT_BASE), random, new int[]{ 0, 1, 2 });
        for (int i = 0; i < 3; i++)
        {
            start(i);
        }

        runUntil(() -> driver.acked.size() >= 1500, "first half appended");
        final int leader = leader();
        agents[leader].onClose();
        agents[leader] = null;
        network.setUp(leader, false);
        runUntil(() -> leader() >= 0 && driver.acked.size() >= 2500, "a new leader carries on");
        start(leader);
        runUntil(() -> driver.acked.size() >= 3500, "second half appended");
        runUntilQuiet();

        final long end = agents[leader()].logPosition();
        assertTrue(end > 4L * SEGMENT, "crossed several segment ends: " + end);
        final List<List<String>> logs = new ArrayList<>();
        for (int i = 0; i < 3; i++)
        {
            assertEquals(end, agents[i].commitPosition(), "member " + i + " committed everything");
            agents[i].onClose();
            final List<String> frames = new ArrayList<>();
            ArchiveLog.verify(dir.resolve("node" + i).resolve("log"), (buffer, offset, length, position, term, type) ->
                frames.add(position + ":" + term + ":" + type + ":" + length));
            logs.add(frames);
        }
        assertEquals(logs.get(0), logs.get(1));
        assertEquals(logs.get(0), logs.get(2));
    }

    private void start(final int i)
    {
        final Path memberDir = dir.resolve("node" + i);
        final ArchiveLogConfig log = new ArchiveLogConfig().directory(memberDir.resolve("log"))
            .segmentLength(SEGMENT).maxBatchLength(MAX_BATCH).durability(DurabilityPolicy.BATCH);
        final ConsensusConfig config = new ConsensusConfig().memberId(i).members(members)
            .timeouts(SimCluster.ELECTION_TIMEOUT_NS, SimCluster.HEARTBEAT_NS).maxBlockBytes(MAX_BATCH - 1024)
            .maxInFlightBytes(64 * 1024).maxPendingClientAppends(1024);
        network.setUp(i, true);
        logs[i] = new ArchiveRaftLog(log);
        agents[i] = new ConsensusAgent(config, () -> nowNs, () -> nowNs, network.transportFor(i), logs[i],
            new FileElectionState(memberDir), new Random(random.nextLong()));
    }

    private int leader()
    {
        for (int i = 0; i < 3; i++)
        {
            if (null != agents[i] && Role.LEADER == agents[i].role())
            {
                return i;
            }
        }
        return -1;
    }

    private void step(final boolean send)
    {
        awaitSyncs();
        nowNs += random.nextInt(500) * 1_000L;
        network.now(nowNs);
        for (final ConsensusAgent agent : agents)
        {
            if (null != agent)
            {
                agent.doWork();
            }
        }
        driver.doWork(nowNs, send);
    }

    /**
     * The logs sync on threads of their own, in real time, while simulated time runs far faster: before time moves
     * on, wait (in real time, bounded) for what was written to be durable, so that a disk is not slow to the
     * simulation only because the simulation is fast.
     */
    private void awaitSyncs()
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (int i = 0; i < 3; i++)
        {
            while (null != agents[i] && logs[i].durablePosition() < logs[i].appendedPosition() &&
                System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
        }
    }

    private void runUntil(final BooleanSupplier condition, final String what)
    {
        for (int s = 0; s < 200_000 && !condition.getAsBoolean(); s++)
        {
            step(true);
        }
        assertTrue(condition.getAsBoolean(), "not reached: " + what);
    }

    private void runUntilQuiet()
    {
        for (int s = 0; s < 20_000; s++)
        {
            step(false);
            final int leader = leader();
            if (leader >= 0)
            {
                final long end = agents[leader].logPosition();
                boolean all = true;
                for (final ConsensusAgent a : agents)
                {
                    all &= a.commitPosition() == end && a.logPosition() == end;
                }
                if (all)
                {
                    return;
                }
            }
        }
        throw new AssertionError("members did not converge");
    }
}
