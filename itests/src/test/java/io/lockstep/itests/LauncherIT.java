package io.lockstep.itests;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node launcher and the tool as an operator meets them: clear messages and exit codes.
 */
class LauncherIT
{
    @TempDir
    Path dir;

    @Test
    void aWrongConfigIsAClearMessageAndExitCodeTwo() throws Exception
    {
        final Path config = dir.resolve("bad.properties");
        Files.writeString(config, "lockstep.member.id=5\nlockstep.members=0=127.0.0.1:1\nlockstep.data.dir=x\n");
        final JavaProcess.Result result = JavaProcess.run("io.lockstep.consensus.node.ClusterNode", "--config",
            config.toString());
        assertEquals(2, result.exitCode(), result.output());
        assertTrue(result.output().contains("config error") &&
            result.output().contains("lockstep.member.id=5 is not in lockstep.members"), result.output());

        final JavaProcess.Result missing = JavaProcess.run("io.lockstep.consensus.node.ClusterNode", "--config",
            dir.resolve("absent.properties").toString());
        assertEquals(2, missing.exitCode());
        assertTrue(missing.output().contains("config file not found"), missing.output());

        final JavaProcess.Result usage = JavaProcess.run("io.lockstep.consensus.node.ClusterNode");
        assertEquals(2, usage.exitCode());
        assertTrue(usage.output().contains("usage"), usage.output());
    }

    @Test
    void statusOfAClusterThatIsNotRunningSaysDownForEveryMember() throws Exception
    {
        final Path config = dir.resolve("node0.properties");
        Files.writeString(config, "lockstep.member.id=0\nlockstep.members=0=127.0.0.1:1,1=127.0.0.1:2\n" +
            "lockstep.data.dir=" + dir.resolve("d") + "\n");
        final JavaProcess.Result result = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "status",
            "--config",
            config.toString());
        assertEquals(1, result.exitCode(), result.output());
        assertTrue(result.output().contains("member=0 role=down term=-1 log_position=-1 commit_position=-1"),
            result.output());
        assertTrue(result.output().contains("member=1 role=down"), result.output());
    }
}
