package io.lockstep.itests;

import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import io.lockstep.testkit.LogAudit;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.lockstep.itests.ClusterProbes.onlySegment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bit flipped in a running leader's log, in frames a follower still needs: three member processes (durability
 * batch), appends committed while one follower is down, one bit flipped in the leader's segment in the middle of
 * what that follower lacks, and the follower started again. The leader's reader meets the damage as it sends the
 * frames: the leader must not exit; it hands leadership to the other follower, cuts its log at the damaged frame,
 * and fetches the rest from the new leader; every member ends with the same, whole log, every acknowledged append
 * where its acknowledgement said.
 */
class RepairWhileRunningIT
{
    private static final int PAYLOAD = 288;

    @TempDir
    Path dir;

    private final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
    private final Long2LongHashMap acked = new Long2LongHashMap(-1);

    @SuppressWarnings("try") // the members are closed early, to read their logs at rest
    @Test
    void aLeaderThatMeetsADamagedFrameHandsOverAndRepairsItWithoutStopping() throws Exception
    {
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20);
            AdminClient client = members.adminClient())
        {
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            append(client, 0, 500);
            final int leader = client.awaitLeader(20_000);
            final int behind = (leader + 2) % 3;
            awaitConverged(client, members);
            members.kill(behind);
            final long from = client.status(2000).get(leader).logPosition();
            append(client, 500, 2000);
            final long to = client.status(2000).get(leader).logPosition();

            // In the middle of what the stopped follower lacks, inside a frame: a checksum the reader will refuse.
            final long victim = from + (to - from) / 2;
            try (RandomAccessFile file = new RandomAccessFile(onlySegment(members.logDir(leader)).toFile(), "rw"))
            {
                file.seek(victim);
                final int b = file.read();
                file.seek(victim);
                file.write(b ^ 0x10);
            }

            members.start(behind);
            final Map<Integer, AdminClient.Status> status = awaitConverged(client, members);
            assertTrue(members.awaitExit(leader, 1) < 0, "the member that met the damage stayed up");
            final String output = members.output(leader);
            assertTrue(output.contains("hands leadership to member"), output);
            assertTrue(output.contains("found a damaged frame"), output);
            final long end = status.get(behind).commitPosition();
            for (int i = 0; i < 3; i++)
            {
                assertEquals(end, status.get(i).logPosition(), "member " + i + " holds the whole log");
            }
            members.close();

            final List<String> reference = audit(members.logDir(behind));
            for (int i = 0; i < 3; i++)
            {
                assertEquals(reference, audit(members.logDir(i)), "member " + i + " holds the same log");
                final JavaProcess.Result verify = JavaProcess.run("io.lockstep.archive.LogTool", "verify",
                    members.logDir(i).toString());
                assertEquals(0, verify.exitCode(), "member " + i + "'s log verifies whole: " + verify.output());
            }
        }
    }

    private void append(final AdminClient client, final long fromSequence, final long toSequence)
    {
        for (long sequence = fromSequence; sequence < toSequence; sequence++)
        {
            payload.putLong(0, sequence);
            final long position = client.append(payload, 0, PAYLOAD, 5000);
            assertTrue(position > 0, "append " + sequence + " committed");
            acked.put(sequence, position);
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
        assertTrue(null != status, "members did not converge within 30 s\n" + members.output(0) + "\n" +
            members.output(1) + "\n" + members.output(2));
        return status;
    }
}
