package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replacing a dead machine in a three-member cluster without stopping it, as processes, a client under load
 * throughout: member 2 dies; the spare (member 3, listed {@code /nonvoting} and running) is promoted with
 * {@code tool promote-member} once it has caught up, and member 2 is removed with {@code tool remove-member}. The
 * cluster then survives the loss of another original member, which it could not have before; nothing the client
 * was told is lost or applied twice. A change that makes no sense is refused with a clear message.
 */
class MembershipIT
{
    @TempDir
    Path dir;

    @Test
    void aDeadMemberIsReplacedByASpareWithoutStoppingTheCluster() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 4, 1, "batch", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 4; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                assertTrue(admin.awaitLeader(20_000) >= 0);
            }
            final EchoWorkload load = new EchoWorkload(500);
            try (ClusterClient client = ClusterClient.connect(cluster.members(), load))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000));
                load.runFor(1000);

                final JavaProcess.Result refused = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "promote-member", "--config", cluster.config(0).toString(), "--id", "1", "--timeout-ms", "3000");
                assertEquals(1, refused.exitCode(), "member 1 votes already: " + refused.output());
                assertTrue(refused.output().contains("was refused"), refused.output());

                cluster.kill(2);
                load.runFor(1000);
                final JavaProcess.Result promoted = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "promote-member", "--config", cluster.config(0).toString(), "--id", "3");
                assertEquals(0, promoted.exitCode(), promoted.output());
                assertTrue(promoted.output().contains("membership: promote-member member=3 position="),
                    promoted.output());
                final JavaProcess.Result removed = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "remove-member", "--config", cluster.config(0).toString(), "--id", "2");
                assertEquals(0, removed.exitCode(), removed.output());
                final JavaProcess.Result status = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "status",
                    "--config", cluster.config(0).toString());
                assertTrue(status.output().contains("voters=0,1,3 learners=none"), "the configuration, as the " +
                    "leader sees it:\n" + status.output());
                load.runFor(1000);
                load.finishAndCheck(20_000, "after the replacement");

                // Voters are now 0, 1 and 3: losing 0 or 1 leaves a majority.
                final int leader = client.leaderId();
                cluster.kill(leader == 1 ? 0 : 1);
                load.runFor(2000);
                load.finishAndCheck(30_000, "after losing another original member");
                System.out.printf("membership change: spare promoted and dead member removed under load; then " +
                    "another original member lost; %d messages, longest silence %d ms%n", load.sent(),
                    load.longestSilenceMs());
            }
            try (AdminClient admin = cluster.adminClient())
            {
                final Map<Integer, AdminClient.Status> status = admin.status(2_000);
                assertNotNull(status.get(3));
                assertTrue(status.values().stream().anyMatch(s -> s.leaderId() >= 0), status.toString());
            }
        }
    }
}
