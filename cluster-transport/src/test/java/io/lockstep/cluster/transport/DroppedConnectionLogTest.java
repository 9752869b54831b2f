package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DroppedConnectionLogTest
{
    @Test
    void atMostTenLinesASecondAndTheRestCountedUntilTheSecondIsOver()
    {
        final DroppedConnectionLog log = new DroppedConnectionLog("connection", 0);
        long nowNs = 1_000_000_000L;
        for (int i = 0; i < LineBudget.LINES_PER_SECOND; i++)
        {
            assertTrue(log.log(nowNs++, "unidentified peer", "garbage " + i));
        }
        for (int i = 0; i < 25; i++)
        {
            assertFalse(log.log(nowNs++, "unidentified peer", "garbage"), "over the second's budget");
        }
        assertEquals(25, log.heldBack());
        log.reportIfOver(nowNs);
        assertEquals(25, log.heldBack(), "the second is not over yet");
        log.reportIfOver(nowNs + TimeUnit.SECONDS.toNanos(1));
        assertEquals(0, log.heldBack(), "reported once the second is over, with no drop needed to say it");
        assertTrue(log.log(nowNs + TimeUnit.SECONDS.toNanos(2), "unidentified peer", "a new second"));
    }

    @Test
    void theFirstDropOfANewSecondReportsWhatTheLastHeldBackAndStartsAFreshBudget()
    {
        final DroppedConnectionLog log = new DroppedConnectionLog("identity", -1);
        final long start = 5_000_000_000L;
        for (int i = 0; i < LineBudget.LINES_PER_SECOND + 3; i++)
        {
            log.log(start, 7, "wrong proof");
        }
        assertEquals(3, log.heldBack());
        // Exactly one second later, with no poll in between: the drop itself closes the old window.
        assertTrue(log.log(start + TimeUnit.SECONDS.toNanos(1), 7, "wrong proof"));
        assertEquals(0, log.heldBack());
    }
}
