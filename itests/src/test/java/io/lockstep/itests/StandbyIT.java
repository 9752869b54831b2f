package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three voting members and one warm standby ({@code StandbyNode}, a {@code /nonvoting} member), as processes: the
 * standby applies everything to the same state as the others, {@code tool status} shows its lag from the leader,
 * it reports its own lag, and killing it changes nothing for clients (it never counts toward a quorum); restarted,
 * it catches up.
 */
class StandbyIT
{
    @TempDir
    Path dir;

    @Test
    void aWarmStandbyHoldsTheSameStateAndNeverSlowsTheCluster() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 4, 1, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            final EchoWorkload load = new EchoWorkload(1000);
            try (ClusterClient client = startAndConnect(cluster, load))
            {
                load.runFor(2000);
                assertTrue(client.leaderId() != 3, "a standby never leads");

                final JavaProcess.Result status = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "status",
                    "--config", cluster.config(0).toString());
                final Matcher standby = Pattern.compile("standby=3 leader=\\d+ match_position=(\\d+) " +
                    "lag_bytes=(\\d+) lag_ms=(\\d+)").matcher(status.output());
                assertTrue(standby.find(), status.output());

                cluster.kill(3);
                load.runFor(1000);
                load.finishAndCheck(10_000, "standby down");

                cluster.start(3);
                load.runFor(1000);
                load.finishAndCheck(10_000, "standby back");
            }
            try (AdminClient admin = cluster.adminClient())
            {
                final Map<Integer, AdminClient.Status> converged = admin.awaitConverged(20_000);
                assertNotNull(converged, "the standby catches up");
                assertEquals(1, converged.values().stream().map(AdminClient.Status::stateHash).distinct().count(),
                    "the standby holds the same state as the voting members: " + converged);
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!cluster.output(3).contains("lockstep standby 3: applied_position="))
            {
                assertTrue(System.nanoTime() < deadline, "the standby reports its own lag:\n" + cluster.output(3));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
    }

    @Test
    void withTheSynchronousOptionNothingIsAcknowledgedThatTheStandbyDoesNotHold() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 4, 1, "batch", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            cluster.configureAll("lockstep.standby.sync", "true");
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = startAndConnect(cluster, load))
            {
                load.runFor(1000);
                load.finishAndCheck(10_000, "with the standby up");

                cluster.kill(3);
                final long ackedBefore = client.acknowledgedSequence();
                load.runFor(1000);
                assertEquals(ackedBefore, client.acknowledgedSequence(),
                    "nothing acknowledged while no standby holds it");

                cluster.start(3);
                load.finishAndCheck(20_000, "the standby back: everything held is acknowledged, once");
            }
        }
    }

    /**
     * The loss of the primary zone, as processes: three voting members and a standby behind a 5 ms (each way) proxy,
     * synchronous mode, a client under load; every primary process is SIGKILLed, {@code tool promote} makes the
     * standby the voting cluster, and the client resumes there with every acknowledged message applied once. An old
     * member restarted afterwards learns it was removed and stops; started again, it refuses to run.
     */
    @Test
    void aStandbyZoneTakesOverWhenThePrimaryZoneIsLostAndNothingAcknowledgedIsLost() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 4, 1, "batch", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            cluster.configureAll("lockstep.standby.sync", "true");
            cluster.delayStandbys(5);
            final EchoWorkload load = new EchoWorkload(1000);
            try (ClusterClient client = startAndConnect(cluster, load))
            {
                load.runFor(2000);
                final JavaProcess.Result refused = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "promote", "--config", cluster.config(3).toString());
                assertEquals(1, refused.exitCode(), refused.output());
                assertTrue(refused.output().contains("promote refused: primary member"), refused.output());

                final long killedNs = System.nanoTime();
                for (int i = 0; i < 3; i++)
                {
                    cluster.kill(i);
                }
                final JavaProcess.Result promoted = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "promote", "--config", cluster.config(3).toString());
                assertEquals(0, promoted.exitCode(), promoted.output());
                final Matcher lost = Pattern.compile("promote: lost_bytes_at_least=(\\d+) lost_bytes_at_most=(\\d+)")
                    .matcher(promoted.output());
                assertTrue(lost.find(), promoted.output());
                assertEquals("0", lost.group(1), "synchronous mode: the standby held every committed byte\n" +
                    promoted.output());
                assertEquals("0", lost.group(2), "synchronous mode, every standby answered\n" + promoted.output());
                final Matcher commit = Pattern.compile("promote: leader=3 term=\\d+ commit_position=\\d+ " +
                    "first_commit_ms=(\\d+)").matcher(promoted.output());
                assertTrue(commit.find(), promoted.output());

                load.runFor(2000);
                load.finishAndCheck(20_000, "after the promotion");
                System.out.printf("zone loss (processes, synchronous): promote command %d ms to first commit, " +
                    "client outage %d ms, %d messages, 0 acknowledged lost%n", Long.parseLong(commit.group(1)),
                    load.longestSilenceMs(), load.sent());
                assertEquals(3, client.leaderId(), "the client resumed on the promoted member");
                assertTrue(System.nanoTime() - killedNs < TimeUnit.SECONDS.toNanos(60));
            }

            // The old zone comes back: its member learns it was removed from the first promoted member it reaches.
            cluster.start(0);
            assertEquals(3, cluster.awaitExit(0, 20_000), cluster.output(0));
            assertTrue(cluster.output(0).contains("was removed by membership"), cluster.output(0));
            final JavaProcess.Result again = JavaProcess.run("io.lockstep.consensus.node.ClusterNode", "--config",
                cluster.config(0).toString());
            assertEquals(1, again.exitCode(), again.output());
            assertTrue(again.output().contains("was removed by membership epoch 1"), again.output());
        }
    }

    /**
     * Two standbys behind the 5 ms proxy, standby 3 feeding standby 4: both hold the voting members' state, and the
     * zone link carries about one copy of the stream, not two.
     */
    @Test
    void oneStandbyFeedsTheOtherAcrossTheZoneLink() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 5, 2, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            cluster.configureAll("lockstep.standby.relay", "3");
            cluster.delayStandbys(5);
            for (int i = 0; i < 5; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                assertTrue(admin.awaitLeader(20_000) >= 0);
            }
            final EchoWorkload load = new EchoWorkload(2000);
            try (ClusterClient client = ClusterClient.connect(cluster.members(), load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                final long linkBefore = cluster.zoneLinkBytes();
                final int sentBefore = load.sent();
                load.runFor(3000);
                load.finishAndCheck(10_000, "with the relay");
                final long perMessage = (cluster.zoneLinkBytes() - linkBefore) / (load.sent() - sentBefore);
                // Measured here: about 226 bytes per 64-byte echo message with the relay (one copy and two standbys'
                // acknowledgements), about 395 without it (two copies).
                assertTrue(perMessage < 300, "zone link bytes per message: " + perMessage);
                System.out.printf("relay (processes): %d zone-link bytes per message for two standbys%n", perMessage);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                final Map<Integer, AdminClient.Status> converged = admin.awaitConverged(20_000);
                assertNotNull(converged, "both standbys catch up");
                assertEquals(1, converged.values().stream().map(AdminClient.Status::stateHash).distinct().count(),
                    "both standbys hold the voting members' state: " + converged);
            }
        }
    }

    /** Start the three voting members and the standby, wait for a leader, and connect the load's client. */
    private static ClusterClient startAndConnect(final LocalCluster cluster, final EchoWorkload load) throws Exception
    {
        for (int i = 0; i < 4; i++)
        {
            cluster.start(i);
        }
        try (AdminClient admin = cluster.adminClient())
        {
            assertTrue(admin.awaitLeader(20_000) >= 0);
        }
        final ClusterClient client = ClusterClient.connect(cluster.members(), load);
        load.client(client);
        assertTrue(client.awaitConnected(10_000));
        return client;
    }
}
