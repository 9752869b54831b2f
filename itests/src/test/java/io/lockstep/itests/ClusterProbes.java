package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.tool.AdminClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the process tests ask of a running cluster, in one place.
 */
final class ClusterProbes
{
    private ClusterProbes()
    {
    }

    /** @return the member that says it leads, or -1 if none answers so within 300 ms. */
    static int leader(final AdminClient admin)
    {
        for (final AdminClient.Status s : admin.status(300).values())
        {
            if (Role.LEADER == s.role())
            {
                return s.memberId();
            }
        }
        return -1;
    }

    /**
     * Connect the load's client and make a member the leader (by transfer if another was elected), under the load.
     */
    static void makeLeader(final AdminClient admin, final ClusterClient client, final EchoWorkload load,
        final int member)
    {
        load.client(client);
        assertTrue(client.awaitConnected(20_000), "client connected");
        final int first = admin.awaitLeader(20_000);
        if (member != first)
        {
            assertTrue(admin.transferLeadership(first, member, 10_000), "leadership handed to member " + member);
        }
        assertTrue(load.runUntil(gated(() -> member == leader(admin)), 20_000), "member " + member + " leads");
    }

    /**
     * @param logHoldsCommit also require the member's log to reach its own commit position.
     * @return true if a member holds the leader's commit position again (within 4 KiB).
     */
    static boolean caughtUp(final AdminClient admin, final int member, final boolean logHoldsCommit)
    {
        final Map<Integer, AdminClient.Status> statuses = admin.status(300);
        final AdminClient.Status m = statuses.get(member);
        for (final AdminClient.Status s : statuses.values())
        {
            if (Role.LEADER == s.role() && null != m && m.commitPosition() >= s.commitPosition() - 4096 &&
                (!logHoldsCommit || m.logPosition() >= m.commitPosition()))
            {
                return true;
            }
        }
        return false;
    }

    /** @return the condition, asked at most every 250 ms, so that a load's loop keeps its rate meanwhile. */
    static BooleanSupplier gated(final BooleanSupplier condition)
    {
        final long[] nextNs = { 0 };
        return () ->
        {
            final long now = System.nanoTime();
            if (now < nextNs[0])
            {
                return false;
            }
            nextNs[0] = now + TimeUnit.MILLISECONDS.toNanos(250);
            return condition.getAsBoolean();
        };
    }

    /** @return the one segment file of a log directory (a test log small enough to fit one). */
    static Path onlySegment(final Path logDir) throws Exception
    {
        try (Stream<Path> files = Files.list(logDir))
        {
            final List<Path> segments = files.filter(f -> f.getFileName().toString().endsWith(".seg")).toList();
            assertEquals(1, segments.size(), segments.toString());
            return segments.get(0);
        }
    }
}
