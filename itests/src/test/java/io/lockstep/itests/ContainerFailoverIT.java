package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.examples.EchoService;
import io.lockstep.testkit.ContainerCluster;
import io.lockstep.testkit.DockerRequirement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover scenarios with one container per member (the test kit's {@link ContainerCluster}), each under a client
 * sending echo messages at 500/s throughout, each checked from the client's side (it resumes; every acknowledged
 * message comes back exactly once) and the cluster's (replicas agree on state hash at the same position). The
 * suite needs Docker ({@link DockerRequirement}: in CI a missing Docker fails it instead of skipping it).
 */
class ContainerFailoverIT
{
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> FIGURES = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeAll
    static void docker()
    {
        DockerRequirement.check();
    }

    @AfterAll
    static void report()
    {
        FIGURES.forEach(System.out::println);
    }

    @Test
    void leaderKilledUnderLoad() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(TIMEOUT);
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                cluster.kill(leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 10_000),
                    "the client resumes on a new leader");
                load.runFor(1000);
                load.finishAndCheck(20_000, "leader SIGKILL");
                figure("leader SIGKILL under load", load);
            }
            cluster.restart(leader);
            cluster.assertReplicasAgree(TIMEOUT);
        }
    }

    @Test
    void pausedLeader() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(TIMEOUT);
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                cluster.pause(leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 10_000),
                    "the client leaves the hung leader for a new one");
                load.runFor(1000);
                cluster.unpause(leader);
                load.runFor(1000);
                load.finishAndCheck(20_000, "paused leader");
                figure("hung (paused) leader", load);
            }
            cluster.assertReplicasAgree(TIMEOUT);
        }
    }

    @Test
    void partitionedLeaderComesBack() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(TIMEOUT);
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                cluster.isolate(leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 15_000),
                    "the client follows the majority's new leader");
                load.runFor(1000);
                cluster.heal(leader);
                load.runFor(2000);
                load.finishAndCheck(20_000, "partitioned leader");
                figure("partitioned leader comes back", load);
            }
            cluster.assertReplicasAgree(TIMEOUT);
        }
    }

    @Test
    void followerWipedRejoinsBySnapshot() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir)
            .configure("lockstep.snapshot.interval.bytes", "65536")
            .configure("lockstep.snapshot.keep", "1"))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(TIMEOUT);
            final int follower = (leader + 1) % 3;
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                cluster.wipe(follower);
                load.runFor(3000);
                cluster.restart(follower);
                load.runFor(1000);
                load.finishAndCheck(20_000, "follower wiped");
                figure("follower wiped, rejoins by snapshot", load);
            }
            cluster.assertReplicasAgree(TIMEOUT);
            assertTrue(cluster.logs(follower).contains("snapshot"), "the wiped member was sent a snapshot:\n" +
                cluster.logs(follower));
        }
    }

    @Test
    void twoSuccessiveLeaderFailures() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            cluster.start();
            final int first = cluster.awaitLeader(TIMEOUT);
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                cluster.kill(first);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != first, 10_000));
                cluster.restart(first);
                load.runFor(1000);
                final int second = client.leaderId();
                assertNotEquals(first, second);
                cluster.kill(second);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != second, 10_000),
                    "a third leader");
                load.runFor(1000);
                load.finishAndCheck(20_000, "two leader failures");
                figure("two successive leader failures", load);
                cluster.restart(second);
            }
            cluster.assertReplicasAgree(TIMEOUT);
        }
    }

    @Test
    void fullClusterRestart() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            cluster.start();
            cluster.awaitLeader(TIMEOUT);
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);
                for (int i = 0; i < 3; i++)
                {
                    cluster.kill(i);
                }
                for (int i = 0; i < 3; i++)
                {
                    cluster.restart(i);
                }
                assertTrue(load.runUntil(client::isConnected, 15_000), "the session resumes after the restart");
                load.runFor(1000);
                load.finishAndCheck(20_000, "full restart");
                figure("full-cluster restart (all SIGKILLed)", load);
            }
            cluster.assertReplicasAgree(TIMEOUT);
        }
    }

    private static void figure(final String scenario, final EchoWorkload load)
    {
        FIGURES.add(String.format("container scenario: %-40s sent=%d lost=0 duplicated=0 longest_silence_ms=%d",
            scenario, load.sent(), load.longestSilenceMs()));
    }
}
