package io.lockstep.simulation;

import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.MemberMetrics;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames lost on two members of three at once (protocol-aware recovery, see OwedFrames): what was never committed is
 * released and the cluster serves again by itself; what may have been committed and no one holds is named, and the
 * cluster waits for an operator rather than lose it. The invariants are checked after every step throughout.
 * <p>
 * Both tests build the same history: the third member is cut off and falls behind; the leader's disk turns slow, so
 * its follower holds durably (and acknowledges) frames the leader has not yet synced; then leader and follower crash
 * at once, and each finds a damaged frame at restart.
 */
class LostFramesScenarioTest
{
    private static final long NO_STALL = TimeUnit.MILLISECONDS.toNanos(3);

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.parse(System.getProperty("lockstep.scenario.log", "OFF")));
    }

    /** Leader a, follower b, and c cut off behind; b's promise well past a's, a's well past c's log. */
    private record Setup(SimCluster cluster, int a, int b, int c, long cEnd, long aPromise, long bPromise)
    {
    }

    private static Setup followerAheadOfASlowLeader(final long seed)
    {
        final SimCluster cluster = new SimCluster(seed, SimCluster.allVoting(3), NO_STALL);
        cluster.runUntil(() -> cluster.driver.acked.size() >= 20, 20_000, true, "first appends acknowledged");
        final int a = cluster.leader();
        final int b = (a + 1) % 3;
        final int c = (a + 2) % 3;
        cluster.network.partition(c, 1);
        final long cEnd = cluster.log(c).appendedPosition();
        cluster.runUntil(() -> cluster.log(a).promisedPosition() > cEnd + 8192, 20_000, true,
            "the leader and b commit without c");
        cluster.log(a).slowDisk(SimCluster.ELECTION_TIMEOUT_NS / 2, cluster::nowNs);
        cluster.runUntil(() -> cluster.log(b).promisedPosition() > cluster.log(a).promisedPosition() + 300, 20_000,
            true, "b holds durably what the slow leader has not synced");
        cluster.crash(a); // the promise survives the crash; unsynced frames do not
        final long aPromise = cluster.log(a).promisedPosition();
        final long bPromise = cluster.log(b).promisedPosition();
        assertTrue(aPromise > cEnd + 4096 && bPromise > aPromise + 300,
            "c " + cEnd + ", a promised " + aPromise + ", b promised " + bPromise);
        return new Setup(cluster, a, b, c, cEnd, aPromise, bPromise);
    }

    @Test
    void framesLostOnTwoMembersThatWereNeverCommittedAreReleasedAndTheClusterServesAgain()
    {
        final Setup s = followerAheadOfASlowLeader(31);
        final SimCluster cluster = s.cluster();
        // a loses frames c lacks; b loses only frames past a's promise: no one else held those, so they were never
        // committed. Before this release neither a nor b could vote for c, and neither could stand: no leader, ever.
        cluster.crashDamagedAt(s.a(), s.cEnd() + (s.aPromise() - s.cEnd()) / 2);
        cluster.crashDamagedAt(s.b(), s.aPromise() + (s.bPromise() - s.aPromise()) / 2);
        assertTrue(cluster.log(s.a()).owesPromisedFrames() && cluster.log(s.b()).owesPromisedFrames());
        cluster.network.healAll();
        cluster.log(s.a()).slowDisk(0, cluster::nowNs);
        cluster.start(s.a());
        cluster.start(s.b());

        cluster.runUntil(() -> cluster.leader() >= 0, 40_000, true, "a leader is elected without an operator");
        final long before = cluster.historyEnd();
        cluster.runUntil(() -> cluster.historyEnd() > before + 4096, 40_000, true, "the cluster commits again");
        cluster.runUntil(cluster::converged, 40_000, false, "every member holds the same log again");
        cluster.checkAckedEntriesCommitted(cluster.leader());
        assertEquals(1, cluster.agent(s.b()).metrics().get(MemberMetrics.OWED_FRAMES_RELEASED),
            "b released the frames only it had held");
        for (int i = 0; i < 3; i++)
        {
            assertEquals(0, cluster.agent(i).metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE));
        }
    }

    @Test
    void framesThatMayHaveBeenCommittedAndAreLostOnTwoMembersAreNamedAndNothingIsElected()
    {
        final Setup s = followerAheadOfASlowLeader(32);
        final SimCluster cluster = s.cluster();
        // Both lose frames both acknowledged (committed, most of them: a's durable and b's ack made the majority),
        // and c never had them.
        final long lostFrom = s.cEnd() + (s.aPromise() - s.cEnd()) / 2;
        cluster.crashDamagedAt(s.a(), lostFrom);
        cluster.crashDamagedAt(s.b(), lostFrom);
        cluster.network.healAll();
        cluster.log(s.a()).slowDisk(0, cluster::nowNs);
        cluster.start(s.a());
        cluster.start(s.b());

        for (int k = 0; k < 20_000; k++)
        {
            cluster.step(true);
            assertTrue(cluster.leader() < 0, "a leader was elected without frames that may have been committed");
        }
        for (final int owing : new int[]{ s.a(), s.b() })
        {
            assertEquals(1, cluster.agent(owing).metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE),
                "member " + owing + " says its frames are held nowhere");
            final MemberErrors.Entry named = cluster.agent(owing).errors().recent().stream()
                .filter(e -> "lost-frames".equals(e.kind())).findFirst().orElseThrow();
            assertTrue(named.message().contains("from position " + cluster.log(owing).appendedPosition()) &&
                named.message().contains("restore"), named.message());
        }
        assertEquals(0, cluster.agent(s.c()).metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE));
    }
}
