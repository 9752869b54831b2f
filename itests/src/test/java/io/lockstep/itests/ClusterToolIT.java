package io.lockstep.itests;

import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tool commands without an IT of their own, as an operator runs them (a separate process each) against three
 * member processes: status, append, step-down, errors, log describe; then the same commands against a cluster
 * that is down, which must say so and exit 1 rather than hang or print nonsense.
 */
class ClusterToolIT
{
    private static final String TOOL = "io.lockstep.consensus.tool.ClusterTool";

    @TempDir
    Path dir;

    @Test
    void everyCommandWorksOnALiveClusterAndSaysSoWhenItIsDown() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            final String config = cluster.config(0).toString();
            final int leader = awaitLeader(config);

            final JavaProcess.Result append = JavaProcess.run(TOOL, "append", "--config", config, "--count", "50",
                "--size", "64");
            assertEquals(0, append.exitCode(), append.output());
            assertTrue(append.output().contains("appended=50 failed=0"), append.output());

            final int target = (leader + 1) % 3;
            final JavaProcess.Result stepDown = JavaProcess.run(TOOL, "step-down", "--config", config, "--to",
                Integer.toString(target));
            assertEquals(0, stepDown.exitCode(), stepDown.output());
            assertTrue(stepDown.output().contains("leader=" + leader + " handing_over_to=" + target),
                stepDown.output());
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (awaitLeader(config) != target)
            {
                assertTrue(System.nanoTime() < deadline, "member " + target + " leads after the step-down");
            }

            final JavaProcess.Result errors = JavaProcess.run(TOOL, "errors", "--config", config);
            assertEquals(0, errors.exitCode(), errors.output());
            for (int i = 0; i < 3; i++)
            {
                assertTrue(errors.output().contains("member=" + i + " status=up total_errors="), errors.output());
            }

            final JavaProcess.Result describe = JavaProcess.run("io.lockstep.archive.LogTool", "describe",
                cluster.logDir(1).toString());
            assertEquals(0, describe.exitCode(), describe.output());
            assertTrue(describe.output().contains("segment_length=1048576"), describe.output());

            for (int i = 0; i < 3; i++)
            {
                cluster.kill(i);
            }
            final JavaProcess.Result status = JavaProcess.run(TOOL, "status", "--config", config);
            assertEquals(1, status.exitCode(), status.output());
            for (int i = 0; i < 3; i++)
            {
                assertTrue(status.output().contains("member=" + i + " role=down"), status.output());
            }
            final JavaProcess.Result appendDown = JavaProcess.run(TOOL, "append", "--config", config);
            assertEquals(1, appendDown.exitCode(), appendDown.output());
            assertTrue(appendDown.output().contains("appended=0 failed=1"), appendDown.output());
            final JavaProcess.Result snapshotDown = JavaProcess.run(TOOL, "snapshot", "--config", config,
                "--timeout-ms", "2000");
            assertEquals(1, snapshotDown.exitCode(), snapshotDown.output());
            assertTrue(snapshotDown.output().contains("no snapshot was confirmed"), snapshotDown.output());
            final JavaProcess.Result errorsDown = JavaProcess.run(TOOL, "errors", "--config", config);
            assertEquals(1, errorsDown.exitCode(), errorsDown.output());
            assertTrue(errorsDown.output().contains("member=0 status=down"), errorsDown.output());
        }
    }

    private static int awaitLeader(final String config) throws Exception
    {
        final Pattern leader = Pattern.compile("member=(\\d+) role=leader");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true)
        {
            final JavaProcess.Result status = JavaProcess.run(TOOL, "status", "--config", config);
            final Matcher m = leader.matcher(status.output());
            if (0 == status.exitCode() && m.find())
            {
                return Integer.parseInt(m.group(1));
            }
            assertTrue(System.nanoTime() < deadline, "a leader within 20 s: " + status.output());
        }
    }
}
