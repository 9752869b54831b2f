package io.lockstep.consensus.node;

import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.storage.FileElectionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member that lost {@code election.state} but kept its log may have voted in a term it no longer remembers:
 * started as if new, it could vote twice in one term. It refuses to start, naming the file and the way out.
 */
class MissingElectionStateTest
{
    @TempDir
    Path dir;

    @Test
    void aMemberWithALogButNoElectionStateRefusesToStart() throws Exception
    {
        final int port;
        try (ServerSocket free = new ServerSocket(0))
        {
            port = free.getLocalPort();
        }
        final Path config = dir.resolve("node.properties");
        Files.writeString(config, "lockstep.member.id=0\nlockstep.members=0=127.0.0.1:" + port + "\n" +
            "lockstep.data.dir=" + dir.resolve("data") + "\nlockstep.log.segment.length=1048576\n");
        final NodeConfig nodeConfig = NodeConfig.load(config, new Properties());
        final ClusterNode first = ClusterNode.start(nodeConfig);
        try
        {
            // A member of one elects itself and appends its term's first entry.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (first.metrics().get(MemberMetrics.COMMIT_POSITION) <= 0)
            {
                assertTrue(System.nanoTime() < deadline, "the member wrote its first entry within 20 s");
                Thread.onSpinWait();
            }
        }
        finally
        {
            first.close();
        }
        Files.delete(dir.resolve("data").resolve(FileElectionState.FILE_NAME));
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> ClusterNode.start(nodeConfig).close());
        assertTrue(refused.getMessage().contains("election.state is missing but the log holds entries") &&
            refused.getMessage().contains("move the data directory away"), refused.getMessage());
    }
}
