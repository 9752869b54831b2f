package io.lockstep.consensus.node;

import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.transport.ClusterSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rehearsal a member runs in a JVM without the JIT flag goes through what it is for (rollovers, snapshots, a
 * failover, under a client's load), leaves nothing behind, and puts the logging level back.
 */
class JitRehearsalTest
{
    @TempDir
    Path dir;

    @TempDir
    Path parent;

    @Test
    void rehearsesRolloversSnapshotsAndAFailoverAndCleansUp() throws Exception
    {
        final NodeConfig like = ClusterNode.builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir)
            .secret(ClusterSecret.of("a member secret for the rehearsal".getBytes(StandardCharsets.US_ASCII)))
            .durability(DurabilityPolicy.NONE).config();
        final Logger lockstep = Logger.getLogger("io.lockstep");
        final Level before = lockstep.getLevel();
        final JitRehearsal.Outcome outcome = JitRehearsal.run(like, parent);

        assertNotNull(outcome, "the rehearsal ran through (why not is the warning logged above)");
        System.out.println("rehearsal: " + outcome);
        assertTrue(outcome.rollovers() >= 100, "rollovers: " + outcome);
        assertTrue(outcome.snapshots() >= 3, "snapshots: " + outcome);
        assertTrue(outcome.messages() >= 10_000, "messages: " + outcome);
        assertTrue(outcome.sessions() >= 5, "client sessions opened and closed: " + outcome);
        assertEquals(before, lockstep.getLevel(), "the io.lockstep logging level is put back");
        try (Stream<Path> left = Files.list(parent))
        {
            assertEquals(0, left.count(), "its temporary directory is deleted");
        }
    }
}
