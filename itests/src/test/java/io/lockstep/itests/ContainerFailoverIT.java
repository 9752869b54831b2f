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
import java.util.function.Consumer;

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

    /** What a scenario does to the cluster while the client sends; the leader is the one found at the start. */
    @FunctionalInterface
    private interface Faults
    {
        void inject(ContainerCluster cluster, ClusterClient client, EchoWorkload load, int leader) throws Exception;
    }

    /**
     * Start the cluster, connect a client sending at 500/s, run a second, inject the faults (which keep the load
     * going), then check the client's view (everything acknowledged came back exactly once) and that the replicas
     * agree.
     */
    private static void scenario(final String name, final ContainerCluster cluster, final Faults faults)
        throws Exception
    {
        scenario(name, cluster, faults, ignored -> { });
    }

    /**
     * As above, with members brought back after the client's check and before the replicas are compared. Within a
     * scenario every fault runs while the client keeps sending ({@link EchoWorkload#during}): a restart blocks until
     * the member listens, and a client that waited for it would count the harness's pause as the cluster's outage.
     */
    private static void scenario(
        final String name, final ContainerCluster cluster, final Faults faults,
        final Consumer<ContainerCluster> recovery) throws Exception
    {
        cluster.start();
        final int leader = cluster.awaitLeader(TIMEOUT);
        final EchoWorkload load = new EchoWorkload(500);
        try (ClusterClient client = cluster.client(load))
        {
            load.client(client);
            assertTrue(client.awaitConnected(10_000));
            load.runFor(1000);
            load.resetSilence(); // the fault's cost, not the first second of a cold cluster and client
            faults.inject(cluster, client, load, leader);
            load.finishAndCheck(20_000, name);
            figure(name, load);
        }
        recovery.accept(cluster);
        cluster.assertReplicasAgree(TIMEOUT);
    }

    @Test
    void leaderKilledUnderLoad() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            final int[] killed = new int[1];
            scenario("leader SIGKILL under load", cluster, (c, client, load, leader) ->
            {
                killed[0] = leader;
                assertTrue(load.during(() -> c.kill(leader), 30_000), "kill " + leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 10_000),
                    "the client resumes on a new leader");
                load.runFor(1000);
            }, c -> c.restart(killed[0]));
        }
    }

    @Test
    void pausedLeader() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            scenario("hung (paused) leader", cluster, (c, client, load, leader) ->
            {
                assertTrue(load.during(() -> c.pause(leader), 30_000), "pause " + leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 10_000),
                    "the client leaves the hung leader for a new one");
                load.runFor(1000);
                assertTrue(load.during(() -> c.unpause(leader), 30_000), "unpause " + leader);
                load.runFor(1000);
            });
        }
    }

    @Test
    void partitionedLeaderComesBack() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            scenario("partitioned leader comes back", cluster, (c, client, load, leader) ->
            {
                assertTrue(load.during(() -> c.isolate(leader), 30_000), "isolate " + leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 15_000),
                    "the client follows the majority's new leader");
                load.runFor(1000);
                assertTrue(load.during(() -> c.heal(leader), 30_000), "heal " + leader);
                load.runFor(2000);
            });
        }
    }

    @Test
    void followerWipedRejoinsBySnapshot() throws Exception
    {
        final int[] wiped = new int[1];
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir)
            .configure("lockstep.snapshot.interval.bytes", "65536")
            .configure("lockstep.snapshot.keep", "1"))
        {
            scenario("follower wiped, rejoins by snapshot", cluster, (c, client, load, leader) ->
            {
                wiped[0] = (leader + 1) % 3;
                assertTrue(load.during(() -> c.wipe(wiped[0]), 30_000), "wipe " + wiped[0]);
                load.runFor(3000);
                assertTrue(load.during(() -> c.restart(wiped[0]), 30_000), "restart " + wiped[0]);
                load.runFor(1000);
            });
            assertTrue(cluster.logs(wiped[0]).contains("snapshot"), "the wiped member was sent a snapshot:\n" +
                cluster.logs(wiped[0]));
        }
    }

    @Test
    void twoSuccessiveLeaderFailures() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            final int[] killed = new int[1];
            scenario("two successive leader failures", cluster, (c, client, load, first) ->
            {
                assertTrue(load.during(() -> c.kill(first), 30_000), "kill " + first);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != first, 10_000));
                assertTrue(load.during(() -> c.restart(first), 30_000), "restart " + first);
                load.runFor(1000);
                final int second = client.leaderId();
                assertNotEquals(first, second);
                assertTrue(load.during(() -> c.kill(second), 30_000), "kill " + second);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != second, 10_000),
                    "a third leader");
                load.runFor(1000);
                killed[0] = second;
            }, c -> c.restart(killed[0]));
        }
    }

    @Test
    void fullClusterRestart() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, EchoService.class, dir))
        {
            scenario("full-cluster restart (all SIGKILLed)", cluster, (c, client, load, leader) ->
            {
                assertTrue(load.during(() ->
                {
                    for (int i = 0; i < 3; i++)
                    {
                        c.kill(i);
                    }
                    for (int i = 0; i < 3; i++)
                    {
                        c.restart(i);
                    }
                }, 60_000), "all three killed and restarted");
                assertTrue(load.runUntil(client::isConnected, 15_000), "the session resumes after the restart");
                load.runFor(1000);
            });
        }
    }

    private static void figure(final String scenario, final EchoWorkload load)
    {
        FIGURES.add(String.format("container scenario: %-40s sent=%d lost=0 duplicated=0 longest_silence_ms=%d",
            scenario, load.sent(), load.longestSilenceMs()));
    }
}
