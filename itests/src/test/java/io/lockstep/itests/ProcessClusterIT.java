package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.testkit.ProcessCluster;
import io.lockstep.testkit.TestCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The test kit where Docker is absent: the same {@link TestCluster} faults on member processes (SIGKILL, SIGSTOP
 * and SIGCONT, wipe, restart), the client's view checked as in the container suite; a partition is refused with
 * the reason.
 */
class ProcessClusterIT
{
    @TempDir
    Path dir;

    @Test
    void theKitsFaultsWorkOnProcesses() throws Exception
    {
        try (TestCluster cluster = new ProcessCluster(3, "io.lockstep.examples.EchoService", dir))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(Duration.ofSeconds(20));
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = cluster.client(load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(500);
                cluster.pause(leader);
                assertTrue(load.runUntil(() -> client.isConnected() && client.leaderId() != leader, 10_000),
                    "the client leaves the stopped (SIGSTOP) leader");
                cluster.unpause(leader);
                final int follower = (client.leaderId() + 1) % 3 == leader ? (client.leaderId() + 2) % 3 :
                    (client.leaderId() + 1) % 3;
                cluster.wipe(follower);
                load.runFor(500);
                cluster.restart(follower);
                load.runFor(500);
                load.finishAndCheck(20_000, "processes");
            }
            cluster.assertReplicasAgree(Duration.ofSeconds(20));
            assertThrows(UnsupportedOperationException.class, () -> cluster.isolate(0));
        }
    }
}
