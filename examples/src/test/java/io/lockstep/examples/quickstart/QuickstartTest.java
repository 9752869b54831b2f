package io.lockstep.examples.quickstart;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.consensus.node.ClusterNode;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's example as it is printed there: three members of {@link TotalService} started from code, a client
 * that adds 1 to 100 and sees every running total once, in order, across the loss of the leader.
 */
class QuickstartTest
{
    @TempDir
    Path dir;

    private List<ClusterNode> members = List.of();

    @AfterEach
    void close()
    {
        members.forEach(ClusterNode::close);
    }

    @Test
    void theReadmesServiceKeepsItsTotalThroughAFailover() throws Exception
    {
        final int[] ports = { freePort(), freePort(), freePort() };
        members = ThreeMembers.start(dir, ClusterSecret.of("a secret of this test only".getBytes(
            StandardCharsets.US_ASCII)), ports);
        final List<Long> totals = new ArrayList<>();
        try (ClusterClient client = ClusterClient.connect("0=127.0.0.1:" + ports[0] + ",1=127.0.0.1:" + ports[1] +
            ",2=127.0.0.1:" + ports[2], (sessionId, sequence, buffer, offset, length)
                -> totals.add(buffer.getLong(offset))))
        {
            assertTrue(client.awaitConnected(30_000), "connected: " + client.closeReason());
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            addUpTo(client, 1, 50, totals, deadline);
            // The leader stops with numbers still in flight: those it did not acknowledge are resent to the next.
            final int leader = client.leaderId();
            assertTrue(leader >= 0, "the client knows its leader");
            members.get(leader).close();
            addUpTo(client, 51, 100, totals, deadline);
            while (totals.size() < 100)
            {
                assertTrue(System.nanoTime() < deadline, totals.size() + " answers: " + client.closeReason());
                client.poll();
            }
        }
        final List<Long> expected = new ArrayList<>();
        for (long n = 1, total = 0; n <= 100; n++)
        {
            expected.add(total += n);
        }
        assertEquals(expected, totals, "every running total once, in order");
    }

    /** Offer the numbers from to to, without waiting for their answers. */
    private static void addUpTo(
        final ClusterClient client, final long from, final long to, final List<Long> totals, final long deadline)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[Long.BYTES]);
        for (long n = from; n <= to; )
        {
            message.putLong(0, n);
            if (client.offer(message, 0, Long.BYTES) >= 0)
            {
                n++;
            }
            assertTrue(System.nanoTime() < deadline, "sent up to " + n + ": " + client.closeReason());
            client.poll();
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
