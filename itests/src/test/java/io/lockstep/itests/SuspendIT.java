package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tool suspend} and {@code tool resume} against three member processes running the echo service: while
 * suspended, a client's message is neither applied nor acknowledged (the client keeps it); after resume it is
 * applied once, and every member holds the same state.
 */
class SuspendIT
{
    @TempDir
    Path dir;

    @Test
    void suspendHoldsIngressAndResumeAppliesItOnce() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            final int[] echoes = new int[1];
            try (AdminClient admin = cluster.adminClient();
                ClusterClient client = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> echoes[0]++))
            {
                assertTrue(admin.awaitLeader(20_000) >= 0);
                assertTrue(client.awaitConnected(10_000));
                final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
                assertTrue(client.offer(message, 0, 64) >= 0);
                await(client, () -> echoes[0] == 1);

                final JavaProcess.Result suspend = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "suspend", "--config", cluster.config(0).toString());
                assertEquals(0, suspend.exitCode(), suspend.output());
                assertTrue(suspend.output().matches("(?s).*suspended_at=\\d+.*"), suspend.output());

                assertTrue(client.offer(message, 0, 64) >= 0);
                // Held: a bounded look for what must not happen. A second is dozens of the client's resends.
                final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                while (System.nanoTime() < until)
                {
                    client.poll();
                }
                assertEquals(1, echoes[0], "nothing applied while suspended");
                assertEquals(0, client.acknowledgedSequence(), "the held message is not acknowledged");
                assertTrue(client.isConnected(), "the session stays open while suspended");

                final JavaProcess.Result resume = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "resume", "--config", cluster.config(0).toString());
                assertEquals(0, resume.exitCode(), resume.output());
                assertTrue(resume.output().matches("(?s).*resumed_at=\\d+.*"), resume.output());
                await(client, () -> echoes[0] == 2 && client.acknowledgedSequence() == 1);

                final Map<Integer, AdminClient.Status> converged = admin.awaitConverged(20_000);
                assertNotNull(converged, "members converge after resume");
                assertEquals(1, converged.values().stream().map(AdminClient.Status::stateHash).distinct().count(),
                    "every member holds the same state: " + converged);
            }
        }
    }

    private static void await(final ClusterClient client, final BooleanSupplier condition)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "condition not reached in 10 s");
            if (0 == client.poll())
            {
                Thread.onSpinWait();
            }
        }
    }
}
