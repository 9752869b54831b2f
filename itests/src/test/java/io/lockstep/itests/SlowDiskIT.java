package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static io.lockstep.itests.ClusterProbes.caughtUp;
import static io.lockstep.itests.ClusterProbes.gated;
import static io.lockstep.itests.ClusterProbes.leader;
import static io.lockstep.itests.ClusterProbes.makeLeader;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slow disk under a leader, as processes: member 0's log syncs are made to take 3 s each (the test-only key
 * {@code lockstep.test.slow.sync.file}) while it leads under a client's load. Its followers' disks keep committing
 * meanwhile; within about an election timeout it hands leadership to a healthy member; the client loses nothing and
 * gets nothing twice; and once its disk is healthy again member 0 catches up by itself.
 */
class SlowDiskIT
{
    private static final String ECHO = "io.lockstep.examples.EchoService";
    private static final long SLOW_SYNC_MS = 3000;

    @TempDir
    Path dir;

    @Test
    void aLeaderWhoseDiskTurnsSlowHandsOverAndTheClientBarelyNotices() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "batch", 1 << 20, ECHO))
        {
            final Path slowFile = dir.resolve("slow-sync-0");
            Files.writeString(cluster.config(0), NodeConfig.TEST_SLOW_SYNC_FILE + "=" + slowFile + "\n",
                StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            try
            {
                slowDiskUnderLoad(cluster, slowFile);
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError(ex + "\n---- member 0:\n" + cluster.output(0), ex);
            }
        }
    }

    private void slowDiskUnderLoad(final LocalCluster cluster, final Path slowFile) throws Exception
    {
        for (int i = 0; i < 3; i++)
        {
            cluster.start(i);
        }
        final EchoWorkload load = new EchoWorkload(200);
        try (AdminClient admin = cluster.adminClient();
            ClusterClient client = ClusterClient.connect(cluster.members(), load))
        {
            makeLeader(admin, client, load, 0);
            load.runFor(1000);
            load.finishAndCheck(20_000, "before the slow disk");
            final long silenceBefore = load.longestSilenceMs();

            Files.writeString(slowFile, Long.toString(SLOW_SYNC_MS));
            final long slowAtNs = System.nanoTime();
            assertTrue(load.runUntil(gated(() -> leader(admin) > 0), 20_000),
                "member 0, its disk slow, handed leadership over");
            final long handedOverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - slowAtNs);
            load.runFor(2000);
            load.finishAndCheck(20_000, "member 0's disk slow (" + SLOW_SYNC_MS + " ms a sync)");
            final long silence = load.longestSilenceMs();
            System.out.printf("slow disk: leadership moved %d ms after the leader's syncs turned %d ms slow; " +
                "longest client silence %d ms (%d ms before)%n", handedOverMs, SLOW_SYNC_MS, silence, silenceBefore);
            // Handed over before even one of its syncs finished: it acted on its followers' acknowledgements.
            assertTrue(handedOverMs < SLOW_SYNC_MS, "handed over in " + handedOverMs + " ms");
            assertTrue(silence < SLOW_SYNC_MS / 2, "the client waited " + silence + " ms at most, not a slow sync");

            Files.delete(slowFile);
            assertTrue(load.runUntil(gated(() -> caughtUp(admin, 0, false)), 30_000),
                "member 0 catches up on a healthy disk");
            load.runFor(1000);
            load.finishAndCheck(20_000, "after the disk recovered");
            assertTrue(cluster.awaitExit(0, 1) < 0, "member 0 stayed up throughout");
        }
    }
}
