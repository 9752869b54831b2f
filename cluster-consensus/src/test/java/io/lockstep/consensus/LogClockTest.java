package io.lockstep.consensus;

import io.lockstep.consensus.log.ClusterActionRequestEncoder;
import io.lockstep.consensus.log.NewLeadershipTermEncoder;
import io.lockstep.consensus.log.ServiceMessageEncoder;
import io.lockstep.consensus.log.SessionCloseEncoder;
import io.lockstep.consensus.log.SessionMessageEncoder;
import io.lockstep.consensus.log.SessionOpenEncoder;
import io.lockstep.consensus.log.TimerEventEncoder;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogClockTest
{
    private long wallNs = 1_795_000_000_000_000_000L;
    private long monotonicNs = 5_000_000_000L;
    private final LogClock clock = new LogClock(() -> wallNs);

    @Test
    void followsTheWallClockWhileItRunsAhead()
    {
        clock.start(monotonicNs);
        advance(1_000_000, 1_000_000);
        assertEquals(wallNs, clock.tick(monotonicNs));
        advance(3_000_000_000L, 1_000_000); // an NTP step forward is followed at once
        assertEquals(wallNs, clock.tick(monotonicNs));
    }

    @Test
    void aNewLeaderWhoseClockLagsNeverStampsBelowWhatItsLogHolds()
    {
        final long previousLeaderStamp = wallNs + 2_000_000_000L; // the old leader's clock ran 2 s ahead
        clock.observe(previousLeaderStamp);
        clock.start(monotonicNs);
        final long first = clock.tick(monotonicNs);
        assertTrue(first >= previousLeaderStamp, "no entry earlier than one the log holds");
        long last = first;
        for (int i = 0; i < 100; i++)
        {
            advance(10_000_000, 10_000_000);
            final long t = clock.tick(monotonicNs);
            assertTrue(t >= last + 5_000_000, "never stops: at least half speed while the wall clock is behind");
            last = t;
        }
    }

    @Test
    void aBackwardStepSlowsLogTimeToHalfSpeedUntilTheWallClockCatchesUp()
    {
        clock.start(monotonicNs);
        final long before = clock.tick(monotonicNs);
        advance(-1_000_000_000L, 0); // the wall clock steps back one second
        long t = before;
        int ticks = 0;
        while (wallNs < t)
        {
            advance(1_000_000, 1_000_000);
            final long next = clock.tick(monotonicNs);
            assertEquals(t + 500_000, next, "half speed while behind");
            t = next;
            ticks++;
        }
        // Catching up a 1 s step at half speed takes 2 s of real time: the stated bound on a timer's delay.
        assertEquals(2000, ticks, 1);
        advance(1_000_000, 1_000_000);
        assertEquals(wallNs, clock.tick(monotonicNs), "back on the wall clock once it has caught up");
    }

    @Test
    void everyLogEntryTemplateCarriesItsTimestampFirst()
    {
        // LogClock reads an entry's time at one offset for every template: this is what makes that true.
        assertEquals(0, NewLeadershipTermEncoder.timestampEncodingOffset());
        assertEquals(0, SessionOpenEncoder.timestampEncodingOffset());
        assertEquals(0, SessionMessageEncoder.timestampEncodingOffset());
        assertEquals(0, SessionCloseEncoder.timestampEncodingOffset());
        assertEquals(0, TimerEventEncoder.timestampEncodingOffset());
        assertEquals(0, ServiceMessageEncoder.timestampEncodingOffset());
        assertEquals(0, ClusterActionRequestEncoder.timestampEncodingOffset());
    }

    private void advance(final long wallDeltaNs, final long monotonicDeltaNs)
    {
        wallNs += wallDeltaNs;
        monotonicNs += monotonicDeltaNs;
    }
}
