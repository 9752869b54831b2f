package io.lockstep.consensus.node;

import io.lockstep.consensus.MemberMetrics;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsServerTest
{
    private final MemberMetrics metrics = new MemberMetrics();

    @SuppressWarnings("try") // the server only has to be listening
    @Test
    void aClientThatSendsHalfARequestIsDroppedAfterTheTimeoutAndTheServerListensWhereItIsTold() throws Exception
    {
        final int port;
        try (ServerSocket free = new ServerSocket(0))
        {
            port = free.getLocalPort();
        }
        try (MetricsServer server = new MetricsServer(new MetricsSettings(port, "127.0.0.1", 1000), 3, metrics,
            () -> true, () -> { });
            Socket slow = new Socket("127.0.0.1", port))
        {
            slow.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(
                StandardCharsets.US_ASCII));
            slow.setSoTimeout(15_000);
            final long start = System.nanoTime();
            assertEquals(-1, slow.getInputStream().read(), "closed, never answered");
            final long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(waitedMs < 10_000, "dropped within the bound (and the server's 1 s sweep): " + waitedMs);
            try (Socket other = new Socket())
            {
                assertThrows(IOException.class, () -> other.connect(new InetSocketAddress(
                    InetAddress.getLocalHost().getHostAddress().equals("127.0.0.1") ? "127.0.0.2" :
                    InetAddress.getLocalHost().getHostAddress(), port), 1000), "not on other addresses");
            }
        }
    }

    @Test
    void everyMetricIsRenderedOnceWithHelpTypeAndMemberLabel()
    {
        metrics.set(MemberMetrics.TERM, 7);
        metrics.increment(MemberMetrics.ELECTIONS_STARTED);
        metrics.increment(MemberMetrics.ELECTIONS_STARTED);
        final String text = MetricsServer.render(3, metrics);
        assertTrue(text.contains("# HELP lockstep_term Current term\n# TYPE lockstep_term gauge\n" +
            "lockstep_term{member=\"3\"} 7\n"), text);
        assertTrue(text.contains("# TYPE lockstep_elections_started_total counter\n" +
            "lockstep_elections_started_total{member=\"3\"} 2\n"), text);
        assertTrue(text.contains("lockstep_leader_id{member=\"3\"} -1\n"), "no leader known at first: " + text);
        // One line per value, plus the flush histogram: a line per bucket (+Inf too), its sum and its count.
        final long histogramLines = MemberMetrics.flushBucketCount() + 1 + 2;
        assertEquals(MemberMetrics.count() + histogramLines,
            text.lines().filter(l -> l.startsWith("lockstep_")).count());
        assertEquals(MemberMetrics.count() + 1, text.lines().filter(l -> l.startsWith("# TYPE ")).distinct().count());
    }

    @Test
    void flushTimesAreACumulativeHistogramInSeconds()
    {
        metrics.recordFlush(40_000);
        metrics.recordFlush(300_000);
        metrics.recordFlush(2_000_000_000L);
        final String text = MetricsServer.render(1, metrics);
        assertTrue(text.contains("# TYPE lockstep_log_flush_seconds histogram\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_bucket{member=\"1\",le=\"5.0E-5\"} 1\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_bucket{member=\"1\",le=\"5.0E-4\"} 2\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_bucket{member=\"1\",le=\"0.1\"} 2\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_bucket{member=\"1\",le=\"+Inf\"} 3\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_count{member=\"1\"} 3\n"), text);
        assertTrue(text.contains("lockstep_log_flush_seconds_sum{member=\"1\"} 2.00034\n"), text);
    }

    @Test
    void readyOnlyWithALeaderNothingOwedAndApplyingCaughtUp()
    {
        assertEquals("no leader known", MetricsServer.notReadyReason(metrics));
        metrics.set(MemberMetrics.LEADER_ID, 1);
        metrics.set(MemberMetrics.OWES_LOST_FRAMES, 1);
        assertEquals("owes log frames lost to disk damage", MetricsServer.notReadyReason(metrics));
        metrics.set(MemberMetrics.OWES_LOST_FRAMES, 0);
        metrics.set(MemberMetrics.COMMIT_POSITION, 10 * 1024 * 1024);
        metrics.set(MemberMetrics.APPLIED_POSITION, 1024);
        assertTrue(MetricsServer.notReadyReason(metrics).startsWith("applying: "),
            MetricsServer.notReadyReason(metrics));
        metrics.set(MemberMetrics.APPLIED_POSITION, 10 * 1024 * 1024 - 4096);
        assertNull(MetricsServer.notReadyReason(metrics));
    }
}
