package io.lockstep.examples.kv;

import io.lockstep.cluster.client.SessionClient;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.examples.kv.codecs.KvOp;
import io.lockstep.examples.kv.codecs.KvRequestEncoder;
import io.lockstep.examples.kv.codecs.KvResponseDecoder;
import io.lockstep.examples.kv.codecs.MessageHeaderDecoder;
import io.lockstep.examples.kv.codecs.MessageHeaderEncoder;
import io.lockstep.simulation.SeedProgress;
import io.lockstep.simulation.SeedReplay;
import io.lockstep.simulation.SimServiceCluster;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The key-value store under the simulation's faults (crashes with durable frames lost, bounces, snapshots lost and
 * damaged, partitions, one-way blackholes, cuts, flapping links, clock steps), with three clients doing gets, puts
 * and compare-and-sets on three keys, one operation at a time each. Every client's history (call and return in
 * simulated time) must be linearizable, checked by {@link LinearizabilityChecker} on every seed, and no member may
 * ever apply an operation twice. Replay one seed: {@code -Dlockstep.kv.seed=N}; more: {@code -Dlockstep.kv.seeds=N}.
 */
class KeyValueSimulationTest
{
    private static final int CLIENTS = 3;
    private static final String[] KEYS = { "k0", "k1", "k2" };

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    /** One client: at most one operation outstanding, recorded when it is answered. */
    private static final class Client
    {
        final int id;
        final SessionClient session;
        final List<HistoryOperation> history;
        final KvRequestEncoder request = new KvRequestEncoder();
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final KvResponseDecoder response = new KvResponseDecoder();
        final UnsafeBuffer out = new UnsafeBuffer(new byte[256]);
        long nextOpId;
        long awaitedOpId = -1;
        KvOp op;
        String key;
        String expected;
        String value;
        long callNs;
        long nowNs;
        long duplicatesSeen;

        Client(final int id, final SimServiceCluster cluster, final List<HistoryOperation> history)
        {
            this.id = id;
            this.history = history;
            this.session = new SessionClient(cluster.clientTransport(id), cluster.memberIds(),
                new SessionClient.Listener()
                {
                    public void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer,
                        final int offset, final int length)
                    {
                        onResponse(buffer, offset);
                    }

                    public void onEgressGap(final long sessionId, final long fromSequence)
                    {
                        throw new AssertionError("client " + id + " missed egress from " + fromSequence);
                    }

                    public void onClosed(final long sessionId)
                    {
                        throw new AssertionError("session of client " + id + " closed");
                    }
                }, 20_000_000L, 150_000_000L, 64, 1024);
        }

        void maybeStart(final Random random, final long nowNs)
        {
            if (awaitedOpId >= 0 || !session.isConnected() || random.nextInt(8) != 0)
            {
                return;
            }
            op = KvOp.get((short)random.nextInt(3));
            key = KEYS[random.nextInt(KEYS.length)];
            // Few distinct values, so that compare-and-sets sometimes succeed.
            expected = KvOp.CAS == op ? "v" + random.nextInt(4) : null;
            value = KvOp.GET == op ? null : "v" + random.nextInt(4);
            final long opId = nextOpId++;
            request.wrapAndApplyHeader(out, 0, headerEncoder).clientId(id).opId(opId).kind(op).key(key)
                .expected(expected).value(value);
            if (session.offer(out, 0, MessageHeaderEncoder.ENCODED_LENGTH + request.encodedLength()) >= 0)
            {
                awaitedOpId = opId;
                callNs = nowNs;
            }
        }

        void onResponse(final DirectBuffer buffer, final int offset)
        {
            header.wrap(buffer, offset);
            response.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            duplicatesSeen = Math.max(duplicatesSeen, response.duplicatesSeen());
            if (response.clientId() != id || response.opId() != awaitedOpId)
            {
                throw new AssertionError("client " + id + " got an answer to op " + response.opId() + " awaiting " +
                    awaitedOpId);
            }
            final boolean success = 1 == response.success();
            final String read = response.value();
            final String output = KvOp.GET == op ? read : KvOp.CAS == op ? Boolean.toString(success) : null;
            history.add(new HistoryOperation(id, op.name().toLowerCase(), key, expected, value, callNs, nowNs, "ok",
                output));
            awaitedOpId = -1;
        }
    }

    @Test
    void everyHistoryIsLinearizableAndNoOperationIsAppliedTwice()
    {
        final String fixed = System.getProperty("lockstep.kv.seed");
        final int seeds = null != fixed ? 1 : Integer.getInteger("lockstep.kv.seeds", 1000);
        final long first = null != fixed ? Long.parseLong(fixed) : Long.getLong("lockstep.kv.firstSeed", 1);
        final SeedProgress progress = new SeedProgress("key-value simulation");
        long operations = 0;
        for (long seed = first; seed < first + seeds; seed++)
        {
            try
            {
                operations += runOne(seed, seed % 2 == 0);
            }
            catch (final Throwable t)
            {
                final long failedSeed = seed;
                throw new AssertionError("key-value simulation failed (" + SeedReplay.again(
                    () -> runOne(failedSeed, failedSeed % 2 == 0)) + "); replay: mvn -pl examples -am test " +
                    "-Dsurefire.failIfNoSpecifiedTests=false -Dtest=KeyValueSimulationTest -Dlockstep.kv.seed=" + seed,
                        t);
            }
            progress.seedDone(seed);
        }
        final double seconds = progress.seconds();
        System.out.printf("key-value simulation: %d seeds from %d, %d operations, every history linearizable, none " +
            "applied twice, %.1f s, %.0f seeds/s%n", seeds, first, operations, seconds, seeds / seconds);
    }

    /**
     * The same with a warm standby (a fourth, non-voting member, crashed, cut off and slowed like the others), and
     * on every other seed the synchronous standby option: histories stay linearizable, nothing applies twice, and
     * the simulation checks after every step that the standby holds the same state at the same positions.
     * {@code -Dlockstep.kv.standbySeeds=N} (default 300).
     */
    @Test
    void withAWarmStandbyEveryHistoryIsStillLinearizable()
    {
        final int seeds = Integer.getInteger("lockstep.kv.standbySeeds", 300);
        long operations = 0;
        for (long seed = 1; seed <= seeds; seed++)
        {
            try
            {
                operations += runOne(seed, seed % 3 == 0, true, seed % 2 == 0);
            }
            catch (final Throwable t)
            {
                final long failedSeed = seed;
                throw new AssertionError("key-value simulation with a standby failed at seed " + seed + " (" +
                    SeedReplay.again(() -> runOne(failedSeed, failedSeed % 3 == 0, true, failedSeed % 2 == 0)) +
                    ")", t);
            }
        }
        System.out.printf("key-value simulation with a warm standby: %d seeds (half with the synchronous option), " +
            "%d operations, every history linearizable, none applied twice%n", seeds, operations);
    }

    /**
     * The synchronous standby finds a damaged frame in log the leader has since purged under a snapshot, while its
     * own commit position is past that snapshot and it holds no snapshot of its own that far: it is sent the
     * leader's and catches up. Its commit alone once made it answer that it held the snapshot already; the leader
     * then offered log from the snapshot on, the standby's log ended at the cut, and the two went round that loop for
     * good. With the synchronous option nothing commits that no standby holds, so the leader never took the newer
     * snapshot that would have broken the loop: every commit stopped.
     */
    @Test
    void aStandbyWhoseDamagedFrameTheLeaderPurgedIsSentTheSnapshotAndCommitsGoOn()
    {
        final DamagedStandby run = new DamagedStandby(11, false);
        assertEquals(1, run.cluster.member(SimServiceCluster.MEMBERS).consensus().metrics()
            .get(MemberMetrics.LOG_FRAMES_REPAIRED), "the damaged frame was cut and repaired");
        assertEquals(1, run.cluster.snapshotsInstalled(SimServiceCluster.MEMBERS), "the leader's snapshot was " +
            "installed" + run.cluster.describe());
    }

    /**
     * The same, but the standby's service had applied the leader's snapshot's entry before the damage, so its own
     * snapshot there is written by the time the leader offers the leader's: the standby starts again from its own
     * (log and service restarted there) and the leader sends the rest, with nothing installed over the standby's
     * own snapshots (which would record a second snapshot at a position already recorded).
     */
    @Test
    void aStandbyWhoseDamagedFrameItsOwnSnapshotCoversResumesFromItsOwnSnapshot()
    {
        final DamagedStandby run = new DamagedStandby(11, true);
        assertEquals(0, run.cluster.snapshotsInstalled(SimServiceCluster.MEMBERS), "nothing installed" +
            run.cluster.describe());
        assertEquals(1, run.cluster.member(SimServiceCluster.MEMBERS).consensus().metrics()
            .get(MemberMetrics.LOG_FRAMES_REPAIRED), "the damaged frame was cut and repaired");
    }

    /** Clients run until the standby holds log below the leader's log start, it is damaged there, and all settles. */
    private static final class DamagedStandby
    {
        final SimServiceCluster cluster;

        DamagedStandby(final long seed, final boolean ownSnapshotCovers)
        {
            cluster = new SimServiceCluster(seed, CLIENTS, KeyValueService::new, true, 8 * 1024, true, true);
            final List<HistoryOperation> history = new ArrayList<>();
            final Client[] clients = new Client[CLIENTS];
            for (int c = 0; c < CLIENTS; c++)
            {
                clients[c] = new Client(c, cluster, history);
            }
            long damaged = -1;
            for (int s = 0; damaged < 0; s++)
            {
                assertTrue(s < 50_000, "the standby never kept log the leader had purged" + cluster.describe());
                step(cluster, clients, false, true);
                damaged = damageStandbyBelowTheLeadersLog(cluster, SimServiceCluster.MEMBERS, ownSnapshotCovers);
            }
            settleAndCheck(seed, cluster, clients, history, " after the damage at " + damaged);
        }
    }

    /**
     * @return where the standby's log was damaged: at its start, below the leader's log start, with the standby's
     * commit position past the leader's snapshot and its service past that snapshot's entry or not, as asked; -1
     * (nothing damaged) until the standby holds such log.
     */
    private static long damageStandbyBelowTheLeadersLog(final SimServiceCluster cluster, final int standby,
        final boolean ownSnapshotCovers)
    {
        for (int leader = 0; leader < SimServiceCluster.MEMBERS; leader++)
        {
            final long leaderSnapshot = cluster.snapshotPosition(leader);
            if (null != cluster.member(leader) && Role.LEADER == cluster.member(leader).consensus().role() &&
                null != cluster.member(standby) && leaderSnapshot > 0 &&
                cluster.log(standby).startPosition() < cluster.log(leader).startPosition() &&
                cluster.member(standby).consensus().commitPosition() > leaderSnapshot &&
                ownSnapshotCovers == (cluster.member(standby).container().appliedPosition() >= leaderSnapshot))
            {
                return cluster.log(standby).damageFrameAt(cluster.log(standby).startPosition());
            }
        }
        return -1;
    }

    /**
     * The primary zone lost while clients run, the standbys (one or two, synchronous mode) promoted, the clients
     * carrying on against them: every history still linearizable across the promotion, nothing applied twice, no
     * session lost.
     */
    @Test
    void aStandbyZonePromotedInSynchronousModeKeepsEveryHistoryLinearizable()
    {
        final int seeds = Integer.getInteger("lockstep.kv.zoneLossSeeds", 100);
        long operations = 0;
        for (long seed = 1; seed <= seeds; seed++)
        {
            try
            {
                operations += runZoneLoss(seed);
            }
            catch (final Throwable t)
            {
                final long failedSeed = seed;
                throw new AssertionError("key-value zone-loss simulation failed at seed " + seed + " (" +
                    SeedReplay.again(() -> runZoneLoss(failedSeed)) + ")", t);
            }
        }
        System.out.printf("key-value simulation with the primary zone lost and the standbys promoted: %d seeds " +
            "(synchronous mode), %d operations, every history linearizable, none applied twice, no session lost%n",
            seeds, operations);
    }

    private static int runZoneLoss(final long seed)
    {
        final SimServiceCluster cluster = new SimServiceCluster(seed, CLIENTS, KeyValueService::new, seed % 3 == 0,
            8 * 1024, 1 + (int)(seed % 2), true);
        cluster.planZoneLoss();
        final List<HistoryOperation> history = new ArrayList<>();
        final Client[] clients = new Client[CLIENTS];
        for (int c = 0; c < CLIENTS; c++)
        {
            clients[c] = new Client(c, cluster, history);
        }
        for (int s = 0; s < 2000 + cluster.random().nextInt(1000); s++)
        {
            step(cluster, clients, true, true);
        }
        cluster.loseZone();
        cluster.healAndStartAll();
        cluster.promoteStandbys();
        return settleAndCheck(seed, cluster, clients, history, " after the promotion");
    }

    private static int runOne(final long seed, final boolean snapshots)
    {
        return runOne(seed, snapshots, false, false);
    }

    private static int runOne(final long seed, final boolean snapshots, final boolean standby, final boolean sync)
    {
        final SimServiceCluster cluster = standby ?
            new SimServiceCluster(seed, CLIENTS, KeyValueService::new, snapshots, 8 * 1024, true, sync) :
            new SimServiceCluster(seed, CLIENTS, KeyValueService::new, snapshots);
        final List<HistoryOperation> history = new ArrayList<>();
        final Client[] clients = new Client[CLIENTS];
        for (int c = 0; c < CLIENTS; c++)
        {
            clients[c] = new Client(c, cluster, history);
        }
        for (int s = 0; s < 3000; s++)
        {
            step(cluster, clients, true, true);
        }
        cluster.healAndStartAll();
        return settleAndCheck(seed, cluster, clients, history, "");
    }

    /**
     * Clients carry on without faults, then finish what they started; every member agrees, no operation was applied
     * twice and every key's history is linearizable.
     *
     * @return operations in the history.
     */
    private static int settleAndCheck(
        final long seed, final SimServiceCluster cluster, final Client[] clients,
        final List<HistoryOperation> history, final String when)
    {
        for (int s = 0; s < 2000; s++)
        {
            step(cluster, clients, false, true);
        }
        int s = 0;
        while (!(cluster.membersAgree() && idle(clients)))
        {
            assertTrue(++s < 60_000, "seed " + seed + ": did not settle" + when + cluster.describe());
            step(cluster, clients, false, false);
        }
        for (final Client client : clients)
        {
            assertEquals(0, client.duplicatesSeen, "seed " + seed + ": an operation was applied twice");
        }
        final LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
        assertTrue(result.linearizable(), "seed " + seed + ": history of key " + result.badKey() +
            " is not linearizable" + when + ": " + result.detail());
        return history.size();
    }

    private static void step(
        final SimServiceCluster cluster, final Client[] clients, final boolean faults, final boolean clientsStart)
    {
        cluster.step(faults);
        for (final Client client : clients)
        {
            client.nowNs = cluster.nowNs();
            if (clientsStart)
            {
                client.maybeStart(cluster.random(), cluster.nowNs());
            }
            client.session.doWork(cluster.nowNs());
        }
    }

    private static boolean idle(final Client[] clients)
    {
        for (final Client client : clients)
        {
            if (client.awaitedOpId >= 0)
            {
                return false;
            }
        }
        return true;
    }
}
