package io.lockstep.consensus.node;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

class SampledWallClockTest
{
    @Test
    void staysWithinAMillisecondOfTheSystemClockAcrossResamples()
    {
        final SampledWallClock clock = new SampledWallClock();
        final long end = System.nanoTime() + 3 * SampledWallClock.RESAMPLE_NS;
        long reads = 0;
        while (System.nanoTime() < end)
        {
            final long before = System.currentTimeMillis();
            final long read = TimeUnit.NANOSECONDS.toMillis(clock.nanoTime());
            final long after = System.currentTimeMillis();
            // Half a millisecond of sampling error, and the millisecond resolution of the reads around it.
            assertTrue(read >= before - 1 && read <= after + 1, read + " outside [" + before + ", " + after + "]");
            reads++;
        }
        assertTrue(reads > 1000, "read often enough to cross resamples: " + reads);
    }
}
