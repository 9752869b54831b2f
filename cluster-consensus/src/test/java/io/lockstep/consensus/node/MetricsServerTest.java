package io.lockstep.consensus.node;

import io.lockstep.consensus.MemberMetrics;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsServerTest
{
    private final MemberMetrics metrics = new MemberMetrics();

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
        assertEquals(MemberMetrics.count(), text.lines().filter(l -> l.startsWith("lockstep_")).count());
        assertEquals(MemberMetrics.count(), text.lines().filter(l -> l.startsWith("# TYPE ")).distinct().count());
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
        assertTrue(MetricsServer.notReadyReason(metrics).startsWith("applying: "), MetricsServer.notReadyReason(metrics));
        metrics.set(MemberMetrics.APPLIED_POSITION, 10 * 1024 * 1024 - 4096);
        assertNull(MetricsServer.notReadyReason(metrics));
    }
}
