package io.lockstep.itests;

import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.codecs.Role;
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
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.lockstep.itests.ClusterProbes.onlySegment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Committed frames lost on two members of three, which the third never had: three member processes (durability
 * batch); one follower stopped; 1,500 more appends committed by the other two; both killed, and one bit flipped at
 * the same byte of each one's segment, past the stopped member's end. Started again, the cluster must refuse to serve
 * rather than lose them, and both members must name the positions (tool errors, kind lost-frames). Then the
 * operator accepts the loss, as the deployment guide says: the two members' promise files are moved away, and the
 * cluster serves again, every acknowledged append before the named position where its acknowledgement said.
 */
class FramesLostOnTwoMembersIT
{
    private static final int PAYLOAD = 288;
    private static final Pattern NAMED = Pattern.compile("owes log frames from position (\\d+) to (\\d+)");

    @TempDir
    Path dir;

    private final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD]);
    private final Long2LongHashMap acked = new Long2LongHashMap(-1);

    @SuppressWarnings("try") // the members are closed early, to read their logs at rest
    @Test
    void committedFramesLostOnAMajorityAreNamedAndTheClusterWaitsForTheOperator() throws Exception
    {
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20);
            AdminClient client = members.adminClient())
        {
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            appendFrom(client, 0, 500);
            final int a = client.awaitLeader(20_000);
            final int c = (a + 2) % 3;
            final int b = (a + 1) % 3;
            final Map<Integer, AdminClient.Status> converged = client.awaitConverged(30_000);
            assertNotNull(converged, "members converge\n" + members.output(a));
            final long cEnd = converged.get(c).logPosition();
            members.kill(c);
            appendFrom(client, 500, 2000);
            members.killTogether(a, b);

            final long flipAt = cEnd + 300_000;
            for (final int damaged : new int[]{ a, b })
            {
                try (RandomAccessFile file = new RandomAccessFile(onlySegment(members.logDir(damaged)).toFile(), "rw"))
                {
                    assertTrue(file.length() > flipAt + 100_000, "the segment holds the later appends");
                    file.seek(flipAt);
                    final int bit = file.read();
                    file.seek(flipAt);
                    file.write(bit ^ 0x10);
                }
            }
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }

            // Both name what is held nowhere; nobody leads meanwhile, so nothing committed is overwritten.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Map<Integer, AdminClient.Errors> errors = client.errors(500);
            while ((null == named(errors, a) || null == named(errors, b)) && System.nanoTime() < deadline)
            {
                assertTrue(noLeader(client), "a leader was elected without frames that may have been committed");
                errors = client.errors(500);
            }
            final Matcher atA = named(errors, a);
            final Matcher atB = named(errors, b);
            assertNotNull(atA, "member " + a + " names the frames it owes: " + errors.get(a));
            assertNotNull(atB, "member " + b + " names the frames it owes: " + errors.get(b));
            final long lostFrom = Long.parseLong(atA.group(1));
            assertEquals(lostFrom, Long.parseLong(atB.group(1)), "both lost from the same frame");
            assertTrue(lostFrom <= flipAt && lostFrom > flipAt - 1024, "named from the damaged frame: " + lostFrom);
            assertTrue(noLeader(client), "still no leader once both have named the loss");

            // The operator accepts the loss: the promises go, and the members vote on what their logs hold.
            members.killTogether(a, b);
            for (final int damaged : new int[]{ a, b })
            {
                Files.move(members.logDir(damaged).resolve("log.promise"), dir.resolve("promise-" + damaged));
                members.start(damaged);
            }
            client.awaitLeader(30_000);
            appendFrom(client, 2000, 2100);
            assertNotNull(client.awaitConverged(30_000), "members converge after the loss is accepted\n" +
                members.output(a));
            members.close();

            final Long2LongHashMap before = new Long2LongHashMap(-1);
            acked.forEachLong((sequence, position) ->
            {
                if (position <= lostFrom || sequence >= 2000)
                {
                    before.put(sequence, position);
                }
            });
            final List<String> reference = LogAudit.of(members.logDir(a), PAYLOAD).frames();
            for (int i = 0; i < 3; i++)
            {
                final LogAudit audit = LogAudit.of(members.logDir(i), PAYLOAD);
                assertEquals(reference, audit.frames(), "member " + i + " holds the same log");
                assertEquals(0, audit.lost(before), "member " + i + " holds every acknowledged append outside " +
                    "the loss the operator accepted");
            }
        }
    }

    private void appendFrom(final AdminClient client, final long from, final long to)
    {
        for (long sequence = from; sequence < to; sequence++)
        {
            payload.putLong(0, sequence);
            final long position = client.append(payload, 0, PAYLOAD, 10_000);
            assertTrue(position > 0, "append " + sequence + " committed");
            acked.put(sequence, position);
        }
    }

    private static Matcher named(final Map<Integer, AdminClient.Errors> errors, final int member)
    {
        final AdminClient.Errors e = errors.get(member);
        if (null == e)
        {
            return null;
        }
        for (final MemberErrors.Entry entry : e.recent())
        {
            final Matcher m = NAMED.matcher(entry.message());
            if ("lost-frames".equals(entry.kind()) && m.find())
            {
                return m;
            }
        }
        return null;
    }

    private static boolean noLeader(final AdminClient client)
    {
        for (final AdminClient.Status s : client.status(300).values())
        {
            if (Role.LEADER == s.role())
            {
                return false;
            }
        }
        return true;
    }
}
