package io.lockstep.itests;

import io.lockstep.consensus.node.ThreadingSettings;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tool shutdown} against three member processes running the key-value service: every member snapshots at the
 * shutdown entry and exits 0 by itself; restarted, every member loads that snapshot and holds the same state as
 * before the shutdown.
 */
class ShutdownIT
{
    @TempDir
    Path dir;

    /** Both threading modes: in DEDICATED the snapshot at the shutdown entry is taken on the service thread. */
    @ParameterizedTest(name = "lockstep.threading={0}")
    @ValueSource(strings = { "shared", "dedicated" })
    void anOrderlyShutdownSnapshotsEveryMemberAndTheRestartLoadsIt(final String threading) throws Exception
    {
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            members.configureAll(ThreadingSettings.THREADING, threading);
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            final Map<Integer, AdminClient.Status> before;
            try (AdminClient client = members.adminClient())
            {
                final UnsafeBuffer payload = new UnsafeBuffer(new byte[288]);
                for (int n = 0; n < 200; n++)
                {
                    payload.putLong(0, n);
                    assertTrue(client.append(payload, 0, payload.capacity(), 5000) > 0, "append " + n);
                }
                before = client.awaitConverged(20_000);
                assertTrue(null != before, "converged before the shutdown");
            }

            final JavaProcess.Result tool = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "shutdown",
                "--config", members.config(0).toString(), "--timeout-ms", "30000");
            assertEquals(0, tool.exitCode(), tool.output());
            assertTrue(tool.output().matches("(?s).*shutdown_position=\\d+ members_still_running=0 .*"), tool.output());
            final long shutdownPosition = Long.parseLong(tool.output().replaceAll("(?s).*shutdown_position=(\\d+).*",
                "$1"));
            for (int i = 0; i < 3; i++)
            {
                assertEquals(0, members.awaitExit(i, 20_000), "member " + i + " exits 0 by itself\n"
                    + members.output(i));
                assertTrue(members.output(i).contains("stopped: orderly shutdown"), members.output(i));
            }

            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            try (AdminClient client = members.adminClient())
            {
                final Map<Integer, AdminClient.Status> after = client.awaitConverged(20_000);
                assertTrue(null != after, "converged after the restart");
                for (int i = 0; i < 3; i++)
                {
                    final AdminClient.Status status = after.get(i);
                    assertEquals(shutdownPosition, status.snapshotPosition(), "member " + i
                        + " loaded the shutdown snapshot");
                    assertTrue(members.output(i).contains("starts from snapshot"), members.output(i));
                    assertEquals(before.get(0).stateHash(), status.stateHash(), "member " + i
                        + " holds the same state");
                }
            }
        }
    }
}
