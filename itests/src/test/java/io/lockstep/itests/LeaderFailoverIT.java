package io.lockstep.itests;

import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import io.lockstep.testkit.LogAudit;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three real member processes on loopback. Entries are appended through the leader; the leader is killed with
 * SIGKILL, several times; each time a new leader must be elected and commit, the killed member must rejoin and catch
 * up, and at the end every acknowledged entry must be in every member's log on disk at the position its ack named.
 * Prints the time from each kill to the first new commit. Kills: {@code -Dlockstep.itest.kills=N} (default 5).
 */
class LeaderFailoverIT
{
    private static final int PAYLOAD = 288;

    @TempDir
    Path dir;

    private final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
    /** sequence number -> position after its entry, for every acknowledged append. */
    private final Long2LongHashMap acked = new Long2LongHashMap(-1);
    private long sequence;

    @SuppressWarnings("try") // the members are closed early, to read their logs at rest
    @Test
    void killedLeaderIsReplacedAndNoAcknowledgedEntryIsLost() throws Exception
    {
        final int kills = Integer.getInteger("lockstep.itest.kills", 5);
        final List<Long> failoverMs = new ArrayList<>();
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20);
            AdminClient client = members.adminClient())
        {
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            appendSome(client, 200);

            for (int k = 0; k < kills; k++)
            {
                final int leader = awaitLeader(client);
                members.kill(leader);
                final long killedAt = System.nanoTime();
                final long deadline = killedAt + TimeUnit.SECONDS.toNanos(20);
                while (!appendOne(client))
                {
                    assertTrue(System.nanoTime() < deadline, "no new commit within 20 s of killing leader " + leader);
                }
                failoverMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
                final int newLeader = awaitLeader(client);
                assertTrue(newLeader != leader, "a new leader");
                appendSome(client, 100);

                members.start(leader);
                awaitConverged(client, members);
            }

            final Map<Integer, AdminClient.Status> status = awaitConverged(client, members);
            final long end = status.get(0).commitPosition();
            final JavaProcess.Result tool = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "status",
                "--config", members.config(0).toString());
            assertEquals(0, tool.exitCode(), tool.output());
            // One member= line each, then the leader's membership line.
            final String[] lines = tool.output().trim().split("\n");
            assertEquals(4, lines.length, tool.output());
            assertTrue(lines[3].matches("membership leader=\\d epoch=0 version=0 voters=0,1,2 learners=none"),
                lines[3]);
            int leaders = 0;
            for (int i = 0; i < 3; i++)
            {
                assertTrue(lines[i].matches("member=" + i + " role=(leader|follower) term=\\d+ log_position=" + end +
                    " commit_position=" + end + " log_start_position=0 snapshot_position=-1 applied_position=-1 " +
                    "state_hash=0+"), lines[i]);
                leaders += lines[i].contains("role=leader") ? 1 : 0;
            }
            assertEquals(1, leaders, tool.output());
            members.close();
            final List<List<String>> logs = new ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                logs.add(checkLog(members.logDir(i), end));
            }
            assertEquals(logs.get(0), logs.get(1), "members 0 and 1 hold the same log");
            assertEquals(logs.get(0), logs.get(2), "members 0 and 2 hold the same log");
        }
        final List<Long> sorted = new ArrayList<>(failoverMs);
        Collections.sort(sorted);
        System.out.println("leader failover: kill to first new commit " + failoverMs + " ms, median " +
            sorted.get(sorted.size() / 2) + " ms, " + acked.size() + " acknowledged appends");
    }

    /**
     * Every frame of a member's log, with every acknowledged entry found where its ack said.
     */
    private List<String> checkLog(final Path logDir, final long end)
    {
        final LogAudit audit = LogAudit.of(logDir, PAYLOAD);
        assertEquals(0, audit.lost(acked), "acknowledged entries missing from " + logDir);
        assertTrue(audit.frames().size() > acked.size(), "log of " + logDir + " holds the entries");
        return audit.frames();
    }

    private void appendSome(final AdminClient client, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            assertTrue(appendOne(client), "append " + i + " of " + count + " committed");
        }
    }

    private boolean appendOne(final AdminClient client)
    {
        payload.putLong(0, sequence);
        final long position = client.append(payload, 0, PAYLOAD, 5000);
        if (position < 0)
        {
            return false;
        }
        acked.put(sequence++, position);
        return true;
    }

    private static int awaitLeader(final AdminClient client)
    {
        final int leader = client.awaitLeader(20_000);
        assertTrue(leader >= 0, "no leader within 20 s");
        return leader;
    }

    private static Map<Integer, AdminClient.Status> awaitConverged(
        final AdminClient client, final LocalCluster members)
    {
        final Map<Integer, AdminClient.Status> status = client.awaitConverged(30_000);
        assertTrue(null != status, "members did not converge within 30 s\n" + members.output(0));
        return status;
    }
}
