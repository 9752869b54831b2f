package io.lockstep.simulation;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ClusterIdentity;
import io.lockstep.consensus.codecs.Role;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Election and replication rules in scripted scenarios on a simulated cluster (no random faults: each test makes
 * its own). The cluster's invariants are checked after every step throughout.
 */
class ClusterScenarioTest
{
    private static final long NO_STALL = TimeUnit.MILLISECONDS.toNanos(3);

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.parse(System.getProperty("lockstep.scenario.log", "OFF")));
    }

    private static SimCluster stableCluster(final long seed, final boolean[] voting)
    {
        final SimCluster cluster = new SimCluster(seed, voting, NO_STALL);
        cluster.runUntil(() -> cluster.driver.acked.size() >= 20, 20_000, true, "first appends acknowledged");
        cluster.runUntil(cluster::converged, 20_000, false, "converged");
        return cluster;
    }

    @Test
    void twoWipedMembersNeverElectALeaderBesideTheCluster()
    {
        final SimCluster cluster = stableCluster(13, SimCluster.allVoting(3));
        final int keeper = cluster.leader();
        final int a = (keeper + 1) % 3;
        final int b = (keeper + 2) % 3;
        cluster.crash(keeper);
        cluster.wipe(a);
        cluster.wipe(b);
        // The two empty members hear each other at term 0, but the third (down) never answers: they may not form a
        // cluster, and must not elect a leader that lacks what the third still holds.
        for (int k = 0; k < 20_000; k++)
        {
            cluster.step(true);
            assertTrue(cluster.leader() < 0, "a leader was elected by two wiped members at step " + k);
        }
        assertFalse(cluster.agent(a).clusterIdentity().mayElect());
        assertFalse(cluster.agent(b).clusterIdentity().mayElect());

        // The member that kept its data returns: it answers with its term, so the wiped pair wait for its leader; it
        // cannot lead without a vote, and they give none. Nothing is elected, nothing committed is overwritten.
        cluster.start(keeper);
        for (int k = 0; k < 20_000; k++)
        {
            cluster.step(true);
            assertTrue(cluster.leader() < 0, "a leader was elected with two members that lost their data");
        }
        assertEquals(-1, cluster.leader());
    }

    @Test
    void aWipedMemberRejoinsByItselfAndVotesOnceItHoldsTheCommittedLog()
    {
        final SimCluster cluster = stableCluster(14, SimCluster.allVoting(3));
        final int leader = cluster.leader();
        final int wiped = (leader + 1) % 3;
        final ClusterIdentity identity = cluster.agent(leader).clusterIdentity();
        assertTrue(identity.known() && identity.sealed(), "the formed cluster has a sealed identity: " + identity);

        cluster.wipe(wiped);
        assertFalse(cluster.agent(wiped).clusterIdentity().mayElect(), "wiped: it may not vote");
        cluster.runUntil(() -> cluster.agent(wiped).clusterIdentity().mayElect(), 40_000, true,
            "the wiped member catches up and may vote again");
        final ClusterIdentity rejoined = cluster.agent(wiped).clusterIdentity();
        assertEquals(identity.high(), rejoined.high());
        assertEquals(identity.low(), rejoined.low());
        assertTrue(cluster.agent(wiped).commitPosition() > 0 &&
            cluster.log(wiped).appendedPosition() >= cluster.agent(wiped).commitPosition(),
            "it holds the committed log");

        // It counts again: with the third member down, the leader and the rejoined member still commit.
        final int third = (leader + 2) % 3;
        cluster.crash(third);
        final long before = cluster.historyEnd();
        cluster.runUntil(() -> cluster.historyEnd() > before + 1024, 40_000, true,
            "the leader and the rejoined member commit without the third");
    }

    @Test
    void aLeaderWhoseDiskFillsHandsOverAndCatchesUpWhenSpaceReturns()
    {
        final SimCluster cluster = stableCluster(15, SimCluster.allVoting(3));
        final int full = cluster.leader();
        cluster.log(full).diskFull(true);
        cluster.runUntil(() -> cluster.leader() >= 0 && cluster.leader() != full, 20_000, true,
            "the leader with a full disk hands over");
        final long before = cluster.historyEnd();
        cluster.runUntil(() -> cluster.historyEnd() > before + 4096, 40_000, true,
            "the other two commit without it");
        assertTrue(null != cluster.log(full).writeProblem() ||
            cluster.log(full).appendedPosition() < cluster.historyEnd(), "the full member fell behind");
        for (int k = 0; k < 2_000; k++)
        {
            cluster.step(true);
            assertNotEquals(full, cluster.leader(), "a member that cannot write never leads");
        }

        cluster.log(full).diskFull(false);
        cluster.runUntil(cluster::converged, 40_000, false, "space again: it writes and catches up");
        cluster.checkAckedEntriesCommitted(cluster.leader());
    }

    @Test
    void aLeaderWhoseDiskTurnsSlowKeepsCommittingOnItsFollowersAndHandsOver()
    {
        final SimCluster cluster = stableCluster(16, SimCluster.allVoting(3));
        final int slow = cluster.leader();
        final long slowSince = cluster.nowNs();
        cluster.log(slow).slowDisk(10 * SimCluster.ELECTION_TIMEOUT_NS, cluster::nowNs);

        // Commits go on while it still leads: its followers' disks make the majority without it.
        final long before = cluster.historyEnd();
        cluster.runUntil(() -> cluster.historyEnd() > before + 1024, 40_000, true, "commits on the followers' disks");
        assertEquals(slow, cluster.leader(), "within the bound it still leads");
        assertTrue(cluster.log(slow).durablePosition() < cluster.agent(slow).commitPosition(),
            "committed beyond the leader's own durable position");

        cluster.runUntil(() -> cluster.leader() >= 0 && cluster.leader() != slow, 40_000, true,
            "the leader with a slow disk hands over");
        final long tookNs = cluster.nowNs() - slowSince;
        assertTrue(tookNs < 3 * SimCluster.ELECTION_TIMEOUT_NS, "handed over within the bound: " + tookNs + " ns");
        final long after = cluster.historyEnd();
        cluster.runUntil(() -> cluster.historyEnd() > after + 4096, 40_000, true, "the new leader commits");

        cluster.log(slow).slowDisk(0, cluster::nowNs);
        cluster.runUntil(cluster::converged, 40_000, false, "a healthy disk again: it catches up");
        cluster.checkAckedEntriesCommitted(cluster.leader());
    }

    @Test
    void aFollowerWithASlowDiskDoesNotSlowCommits()
    {
        final SimCluster cluster = stableCluster(17, SimCluster.allVoting(3));
        final int leader = cluster.leader();
        final int slow = (leader + 1) % 3;
        cluster.log(slow).slowDisk(10 * SimCluster.ELECTION_TIMEOUT_NS, cluster::nowNs);
        final long before = cluster.historyEnd();
        final long startNs = cluster.nowNs();
        cluster.runUntil(() -> cluster.historyEnd() > before + 16 * 1024, 200_000, true,
            "the leader and the healthy follower commit");
        final long tookNs = cluster.nowNs() - startNs;
        assertTrue(tookNs < 10 * SimCluster.ELECTION_TIMEOUT_NS, "16 KiB committed in " + tookNs + " ns: " +
            "within one sync of the slow disk (with healthy disks it takes about 180 ms at the driver's pace)");
        assertEquals(leader, cluster.leader(), "no election for a follower's disk");
        assertTrue(cluster.log(slow).durablePosition() < cluster.historyEnd(), "the slow follower lags");
    }

    @Test
    void leaderStepsDownWhenMajorityUnreachable()
    {
        final SimCluster cluster = stableCluster(11, SimCluster.allVoting(3));
        final int leader = cluster.leader();
        final long term = cluster.agent(leader).term();
        cluster.network.partition(leader, 1);

        final long cutOffAt = cluster.nowNs();
        cluster.runUntil(() -> Role.LEADER != cluster.agent(leader).role(), 20_000, false,
            "isolated leader steps down");
        assertTrue(cluster.nowNs() - cutOffAt < 3 * SimCluster.ELECTION_TIMEOUT_NS,
            "stepped down within the check-quorum timeout");
        cluster.runUntil(() -> cluster.leader() >= 0 && cluster.leader() != leader, 20_000, false,
            "the majority elects a new leader");
        assertTrue(cluster.agent(cluster.leader()).term() > term);
        assertEquals(term, cluster.agent(leader).term(), "the isolated member cannot raise its term (pre-vote)");
    }

    @Test
    void isolatedLeadersUncommittedEntriesAreReplacedByTheMajoritys()
    {
        final SimCluster cluster = stableCluster(12, SimCluster.allVoting(3));
        final int oldLeader = cluster.leader();
        final long committed = cluster.agent(oldLeader).commitPosition();
        // The driver is cut off with the old leader, so the old leader takes appends it can never commit until
        // check-quorum deposes it.
        cluster.network.partition(oldLeader, 1);
        cluster.network.partition(Transport.CLIENT_ENDPOINT_BASE, 1);
        cluster.runUntil(() -> cluster.log(oldLeader).appendedPosition() > committed, 20_000, true,
            "isolated leader appends");
        final long uncommittedEnd = cluster.log(oldLeader).appendedPosition();
        cluster.network.partition(Transport.CLIENT_ENDPOINT_BASE, 0);
        cluster.runUntil(() -> cluster.leader() >= 0 && cluster.leader() != oldLeader &&
            cluster.historyEnd() > cluster.log(oldLeader).appendedPosition() + 1024, 40_000, true,
            "the majority commits past the old leader's log");

        cluster.network.healAll();
        cluster.runUntil(cluster::converged, 40_000, false, "the old leader rejoins and converges");
        assertNotEquals(oldLeader, cluster.leader());
        assertTrue(uncommittedEnd > committed, "the old leader held uncommitted entries, now replaced");
        cluster.checkAckedEntriesCommitted(oldLeader);
    }

    @Test
    void aRestartedFollowerCatchesUpFromTheLeadersLog()
    {
        final SimCluster cluster = stableCluster(13, SimCluster.allVoting(3));
        final int follower = (cluster.leader() + 1) % 3;
        cluster.crash(follower);
        final int ackedBefore = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 200, 40_000, true,
            "two members commit on without the third");
        final long behind = cluster.historyEnd() - cluster.log(follower).appendedPosition();
        cluster.start(follower);
        cluster.runUntil(cluster::converged, 40_000, false, "the restarted follower catches up");
        assertTrue(behind > 8 * 1024, "it was well behind: " + behind + " bytes");
        cluster.checkAckedEntriesCommitted(follower);
    }

    @Test
    void afterEveryMemberRestartsTheNewLeaderHoldsEveryCommittedEntry()
    {
        final SimCluster cluster = stableCluster(14, SimCluster.allVoting(5));
        for (int round = 0; round < 3; round++)
        {
            final int ackedBefore = cluster.driver.acked.size();
            cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 50, 40_000, true, "appends");
            for (int i = 0; i < 5; i++)
            {
                cluster.crash(i);
            }
            for (int i = 0; i < 5; i++)
            {
                cluster.start(i);
            }
            cluster.runUntil(() -> cluster.leader() >= 0, 40_000, false, "a leader after a full restart");
            assertTrue(cluster.log(cluster.leader()).appendedPosition() >= cluster.historyEnd(),
                "the new leader's log holds the whole committed history");
        }
        cluster.runUntil(cluster::converged, 40_000, false, "converged");
        cluster.checkAckedEntriesCommitted(cluster.leader());
    }

    @Test
    void leadershipTransferHandsOverToTheNamedMember()
    {
        final SimCluster cluster = stableCluster(15, SimCluster.allVoting(3));
        final int oldLeader = cluster.leader();
        final int target = (oldLeader + 2) % 3;
        final long term = cluster.agent(oldLeader).term();
        assertTrue(cluster.driver.requestTransfer(oldLeader, target));
        cluster.runUntil(() -> cluster.leader() == target, 20_000, false, "the target takes over");
        assertEquals(term + 1, cluster.agent(target).term(), "one election, no pre-vote delay");
        final int ackedBefore = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 20, 20_000, true,
            "the new leader commits appends");
        cluster.runUntil(cluster::converged, 20_000, false, "converged under the new leader");
    }

    @Test
    void aNonVotingMemberGetsTheLogButNeverLeadsNorCounts()
    {
        final SimCluster cluster = stableCluster(16, new boolean[]{ true, true, true, false });
        final int standby = 3;
        assertEquals(cluster.log(cluster.leader()).appendedPosition(), cluster.log(standby).appendedPosition());

        // Two of three voting members commit without the standby.
        final int leader = cluster.leader();
        final int follower = (leader + 1) % 3;
        cluster.crash(standby);
        cluster.crash(follower);
        final int ackedBefore = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 20, 20_000, true,
            "a voting majority commits with the standby down");

        // One voting member and the standby are not a quorum: nothing commits, nobody leads.
        cluster.start(standby);
        cluster.crash(leader);
        final long history = cluster.historyEnd();
        for (int s = 0; s < 5_000; s++)
        {
            cluster.step(true);
            assertTrue(Role.LEADER != cluster.agent(standby).role(), "the standby never leads");
        }
        assertEquals(-1, cluster.leader(), "no quorum, no leader");
        assertEquals(history, cluster.historyEnd(), "no quorum, no commit");

        cluster.start(leader);
        cluster.start(follower);
        cluster.runUntil(cluster::converged, 40_000, false, "converged with the standby");
        cluster.checkAckedEntriesCommitted(standby);
    }

    @Test
    void withTheSynchronousOptionNothingCommitsThatNoStandbyHolds()
    {
        final SimCluster cluster = new SimCluster(17, new boolean[]{ true, true, true, false }, NO_STALL, true);
        cluster.runUntil(() -> cluster.driver.acked.size() >= 20, 20_000, true, "first appends acknowledged");
        cluster.runUntil(cluster::converged, 20_000, false, "converged");
        final int standby = 3;
        final int leader = cluster.leader();

        // The standby is cut off: a voting majority is not enough, nothing more commits.
        cluster.network.partition(standby, 1);
        final long committed = cluster.agent(leader).commitPosition();
        final int ackedBefore = cluster.driver.acked.size();
        for (int s = 0; s < 3_000; s++)
        {
            cluster.step(true);
        }
        assertEquals(committed, cluster.agent(cluster.leader()).commitPosition(), "no commit without a standby");
        assertEquals(ackedBefore, cluster.driver.acked.size(), "nothing acknowledged without a standby");
        assertTrue(cluster.log(cluster.leader()).appendedPosition() > committed, "appends waited meanwhile");

        // Back: what the standby now holds commits, and every acknowledged entry is on it.
        cluster.network.healAll();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 20, 20_000, true,
            "commits resume once the standby holds the entries");
        cluster.runUntil(cluster::converged, 20_000, false, "converged with the standby");
        cluster.checkAckedEntriesCommitted(standby);
    }

    @Test
    void oneStandbyFeedsTheOthersAndOneThatFallsBehindIsCaughtUpDirectly()
    {
        // Three voting members and three standbys; standby 3 is the relay.
        final SimCluster cluster = new SimCluster(18, new boolean[]{ true, true, true, false, false, false },
            NO_STALL, false, 3);
        cluster.runUntil(() -> cluster.driver.acked.size() >= 20, 20_000, true, "first appends acknowledged");
        cluster.runUntil(cluster::converged, 20_000, false, "converged");
        final int leader = cluster.leader();
        final long toRelay = cluster.network.bytesSent(leader, 3);
        final long toFour = cluster.network.bytesSent(leader, 4);
        final long toFive = cluster.network.bytesSent(leader, 5);
        final int ackedBefore = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedBefore + 200, 40_000, true, "200 more appends");
        cluster.runUntil(cluster::converged, 20_000, false, "the standbys hold everything");
        final long relayed = cluster.network.bytesSent(leader, 3) - toRelay;
        final long direct = cluster.network.bytesSent(leader, 4) - toFour + cluster.network.bytesSent(leader,
            5) - toFive;
        assertTrue(relayed > 200 * 64, "the relay is sent the log: " + relayed);
        assertTrue(direct < relayed / 10, "the other standbys are fed by the relay, not the leader: " + direct +
            " bytes direct against " + relayed + " to the relay");

        // A standby that missed part of the stream is caught up by the leader directly, then follows again.
        cluster.crash(5);
        final int ackedWhileDown = cluster.driver.acked.size();
        cluster.runUntil(() -> cluster.driver.acked.size() >= ackedWhileDown + 100, 40_000, true,
            "appends while standby 5 is down");
        cluster.start(5);
        cluster.runUntil(cluster::converged, 40_000, false, "standby 5 caught up");
        cluster.checkAckedEntriesCommitted(5);
        cluster.checkAckedEntriesCommitted(4);
    }
}
