package io.lockstep.consensus.tool;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LossEstimateTest
{
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void asynchronousLossIsARangeFromWhatWasHeardToWhatTheRateAllowsSince()
    {
        // The standbys heard commit 10,000, hold 9,000, and last heard the primary 2 s ago at 1,000 bytes a second.
        final LossEstimate loss = LossEstimate.of(false, true, 10_000, 9_000, 2 * SECOND, 1_000);
        assertEquals(1_000, loss.atLeast());
        assertEquals(3_000, loss.atMost());
        assertTrue(loss.describe(100, 3).startsWith(
            "lost_bytes_at_least=1000 lost_bytes_at_most=3000 lost_entries~=10..30 (beyond standby 3's"),
            loss.describe(100, 3));
    }

    @Test
    void neverABareZeroWhileTheStandbysCouldHaveLagged()
    {
        // The zone link was cut at the kill: the standbys hold everything they heard of, but not what came after.
        final LossEstimate cut = LossEstimate.of(false, true, 9_000, 9_000, SECOND / 2, 4_000);
        assertEquals(0, cut.atLeast());
        assertEquals(2_000, cut.atMost());
        final LossEstimate idle = LossEstimate.of(false, true, 9_000, 9_000, SECOND / 2, 0);
        assertEquals(-1, idle.atMost(), "no rate: unbounded, said so");
        assertTrue(idle.describe(100, 3).contains("lost_bytes_at_most=unknown"), idle.describe(100, 3));
    }

    @Test
    void synchronousModeLosesNothingOnlyIfEveryStandbyAnswered()
    {
        assertEquals(0, LossEstimate.of(true, true, 9_000, 9_000, SECOND, 4_000).atMost());
        assertEquals(4_000, LossEstimate.of(true, false, 9_000, 9_000, SECOND, 4_000).atMost(),
            "a standby that did not answer may hold what the primary committed");
    }
}
