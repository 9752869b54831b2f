package io.lockstep.itests;

import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.kv.KeyValueClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tool replay} of a stopped member's data directory reproduces the state hash the member reported at the same
 * applied position, starting from its snapshot; a target before the snapshot replays from the log's start; nothing
 * is written to the directory.
 */
class ReplayIT
{
    private static final String SERVICE = "io.lockstep.examples.kv.KeyValueService";

    @TempDir
    Path dir;

    @Test
    void replayingAMembersDirectoryReproducesItsStateHashAndChangesNothing() throws Exception
    {
        final AdminClient.Status reported;
        final Path dataDir;
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20, SERVICE))
        {
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            try (KeyValueClient kv = new KeyValueClient(7, members.members()))
            {
                assertTrue(kv.awaitConnected(20_000), "client connected");
                for (int n = 0; n < 100; n++)
                {
                    assertEquals("ok", kv.put("k" + n % 10, "v" + n, 5000).status(), "put " + n);
                }
                final JavaProcess.Result snapshot = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool",
                    "snapshot", "--config", members.config(0).toString());
                assertEquals(0, snapshot.exitCode(), snapshot.output());
                for (int n = 100; n < 150; n++)
                {
                    assertEquals("ok", kv.put("k" + n % 10, "v" + n, 5000).status(), "put " + n);
                }
            }
            try (AdminClient client = members.adminClient())
            {
                // A follower writes the snapshot a tool asked for after its stagger (up to a second by default), so
                // converged is not yet enough: ask again until member 1 reports its snapshot too, bounded at 20 s.
                // The short park paces the questions: a converged cluster answers at once, and back-to-back status
                // requests would load the members under test.
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                Map<Integer, AdminClient.Status> status = client.awaitConverged(20_000);
                while (null != status && status.get(1).snapshotPosition() <= 0 && System.nanoTime() < deadline)
                {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    status = client.awaitConverged(20_000);
                }
                assertTrue(null != status, "converged");
                reported = status.get(1);
            }
            dataDir = members.dataDir(1);
        }
        assertTrue(reported.snapshotPosition() > 0, "a snapshot to start from: " + reported);
        final String before = listing(dataDir);

        final JavaProcess.Result replay = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "replay",
            dataDir.toString(), "--service", SERVICE, "--to", Long.toString(reported.appliedPosition()));
        assertEquals(0, replay.exitCode(), replay.output());
        assertTrue(replay.output().contains("from_snapshot=" + reported.snapshotPosition() + " "), replay.output());
        assertTrue(replay.output().contains("applied_position=" + reported.appliedPosition() + " "), replay.output());
        assertTrue(replay.output().contains(String.format(Locale.ROOT, "state_hash=%016x", reported.stateHash())),
            "the replay reaches the state the member reported " + reported + ":\n" + replay.output());
        assertEquals(before, listing(dataDir), "nothing in the member's directory changed");

        // Before the snapshot: the log still holds everything (never purged here), so it replays from the start.
        // 96: the end of the first entry, the first term's NewLeadershipTerm (its frame, aligned).
        final JavaProcess.Result early = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "replay",
            dataDir.toString(), "--service", SERVICE, "--to", "96");
        assertEquals(0, early.exitCode(), early.output());
        assertTrue(early.output().contains("from_snapshot=-1 applied_position=96 "), early.output());
        assertEquals(before, listing(dataDir), "still nothing changed");
    }

    /**
     * Every file with its size and last-modified time.
     */
    private static String listing(final Path root) throws Exception
    {
        try (Stream<Path> files = Files.walk(root))
        {
            return files.filter(Files::isRegularFile).sorted().map(p ->
            {
                try
                {
                    return root.relativize(p) + " " + Files.size(p) + " " + Files.getLastModifiedTime(p).toMillis();
                }
                catch (final IOException ex)
                {
                    throw new IllegalStateException(ex);
                }
            }).collect(Collectors.joining("\n"));
        }
    }
}
