package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tool backup} against a live three-member cluster (a snapshot and committed log after it), then the
 * documented restore: the backup copied into every member of a new cluster, which starts from it and holds the
 * same state hash at the same position as the cluster it was taken from.
 */
class BackupIT
{
    @TempDir
    Path dir;

    @Test
    void aBackupOfALiveMemberRestoresToTheSameState() throws Exception
    {
        final Path backup = dir.resolve("backup");
        final Map<Integer, AdminClient.Status> original;
        final long snapshotPosition;
        try (LocalCluster cluster = new LocalCluster(dir.resolve("a"), 3, "none", 1 << 20,
            "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient();
                ClusterClient client = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> { }))
            {
                assertTrue(client.awaitConnected(20_000));
                send(client, 400);
                snapshotPosition = admin.snapshot(20_000);
                assertTrue(snapshotPosition > 0, "a snapshot to back up");
                send(client, 300);
                // The client stays connected and quiet (its close would be one more entry) until the backup is done.
                original = admin.awaitConverged(20_000);
                assertNotNull(original, "converged before the backup");

                final JavaProcess.Result tool = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "backup",
                    "--config", cluster.config(0).toString(), "--dir", backup.toString());
                assertEquals(0, tool.exitCode(), tool.output());
                final long commit = original.get(0).commitPosition();
                final long backedUpSnapshot = Long.parseLong(tool.output().replaceAll(
                    "(?s).*snapshot_position=(\\d+).*", "$1"));
                assertTrue(backedUpSnapshot >= snapshotPosition && backedUpSnapshot < commit, "the member's " +
                    "newest snapshot (" + snapshotPosition + " or later): " + tool.output());
                assertTrue(tool.output().contains(" log_end=" + commit + " "), "the log after it up to the commit " +
                    "position " + commit + ": " + tool.output());
            }
        }

        try (LocalCluster restored = new LocalCluster(dir.resolve("b"), 3, "none", 1 << 20,
            "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 3; i++)
            {
                copyTree(backup, restored.dataDir(i));
                restored.start(i);
            }
            try (AdminClient admin = restored.adminClient())
            {
                final Map<Integer, AdminClient.Status> after = awaitApplied(admin, original.get(0).commitPosition());
                for (int i = 0; i < 3; i++)
                {
                    assertEquals(original.get(0).stateHash(), after.get(i).stateHash(),
                        "member " + i + " holds the backed-up state");
                    assertTrue(restored.output(i).contains("starts from snapshot"), restored.output(i));
                }
            }
        }
    }

    /** The restored cluster elects a leader and appends its new-term entry: compare at the backup's position. */
    private static Map<Integer, AdminClient.Status> awaitApplied(final AdminClient admin, final long position)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true)
        {
            final Map<Integer, AdminClient.Status> now = admin.awaitConverged(20_000);
            assertNotNull(now, "the restored cluster converges");
            if (now.values().stream().allMatch(s -> s.appliedPosition() >= position))
            {
                return now;
            }
            assertTrue(System.nanoTime() < deadline, "restored members apply the backup's log: " + now);
        }
    }

    private static void send(final ClusterClient client, final int count)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[128]);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long last = -1;
        for (int i = 0; i < count; i++)
        {
            message.putInt(0, i);
            while ((last = client.offer(message, 0, 128)) < 0)
            {
                assertTrue(System.nanoTime() < deadline, "offered within 20 s");
                client.poll();
            }
        }
        while (client.acknowledgedSequence() < last)
        {
            assertTrue(System.nanoTime() < deadline, "acknowledged within 20 s");
            client.poll();
        }
    }

    private static void copyTree(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> paths = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>)paths::iterator)
            {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(target);
                }
                else
                {
                    Files.copy(p, target);
                }
            }
        }
    }
}
