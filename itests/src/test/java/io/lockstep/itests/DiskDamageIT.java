package io.lockstep.itests;

import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import io.lockstep.testkit.LogAudit;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.lockstep.itests.ClusterProbes.onlySegment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bit flipped in frames a member had made durable and acknowledged, as first found by hand: three member processes
 * (durability batch), 2,000 appends of 288 bytes, a follower stopped, one bit flipped at byte 200,000 of its segment,
 * the follower started again. The damage must be named as damage (not a torn tail) by {@code tool log verify}; the
 * member must cut its log there, keep the damaged bytes, fetch the frames again from the others, and end with the
 * same log as they hold, with every acknowledged append where its acknowledgement said.
 */
class DiskDamageIT
{
    private static final int PAYLOAD = 288;

    @TempDir
    Path dir;

    private final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
    private final Long2LongHashMap acked = new Long2LongHashMap(-1);

    @SuppressWarnings("try") // the members are closed early, to read their logs at rest
    @Test
    void aMemberRepairsABitFlipInFramesItAcknowledgedFromTheOthers() throws Exception
    {
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20);
            AdminClient client = members.adminClient())
        {
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            for (long sequence = 0; sequence < 2000; sequence++)
            {
                payload.putLong(0, sequence);
                final long position = client.append(payload, 0, PAYLOAD, 5000);
                assertTrue(position > 0, "append " + sequence + " committed");
                acked.put(sequence, position);
            }
            final int leader = client.awaitLeader(20_000);
            final int damaged = (leader + 1) % 3;
            awaitConverged(client, members);
            members.kill(damaged);

            final Path segment = onlySegment(members.logDir(damaged));
            try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw"))
            {
                file.seek(200_000);
                final int b = file.read();
                file.seek(200_000);
                file.write(b ^ 0x04);
            }
            final JavaProcess.Result verify = JavaProcess.run("io.lockstep.archive.LogTool", "verify",
                members.logDir(damaged).toString());
            assertEquals(1, verify.exitCode(), verify.output());
            assertTrue(verify.output().contains("log status=damaged"), verify.output());
            assertTrue(verify.output().contains("reason=\"checksum mismatch"), verify.output());

            members.start(damaged);
            final Map<Integer, AdminClient.Status> status = awaitConverged(client, members);
            final long end = status.get(leader).commitPosition();
            assertEquals(end, status.get(damaged).logPosition(), "the damaged member holds the whole log again");
            try (Stream<Path> files = Files.list(members.logDir(damaged)))
            {
                assertEquals(1, files.filter(f -> f.getFileName().toString().startsWith("damaged-")).count(),
                    "the damaged bytes are kept for whoever investigates");
            }
            members.close();

            final List<String> reference = audit(members.logDir(leader));
            for (int i = 0; i < 3; i++)
            {
                assertEquals(reference, audit(members.logDir(i)), "member " + i + " holds the leader's log");
                assertEquals(0, JavaProcess.run("io.lockstep.archive.LogTool", "verify",
                    members.logDir(i).toString()).exitCode(), "member " + i + "'s log verifies whole");
            }
        }
    }

    private List<String> audit(final Path logDir)
    {
        final LogAudit audit = LogAudit.of(logDir, PAYLOAD);
        assertEquals(0, audit.lost(acked), "acknowledged entries missing from " + logDir);
        return audit.frames();
    }

    private static Map<Integer, AdminClient.Status> awaitConverged(final AdminClient client, final LocalCluster members)
    {
        final Map<Integer, AdminClient.Status> status = client.awaitConverged(30_000);
        assertTrue(null != status, "members did not converge within 30 s\n" + members.output(0));
        return status;
    }
}
