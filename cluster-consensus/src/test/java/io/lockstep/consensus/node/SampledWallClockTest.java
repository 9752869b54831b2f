package io.lockstep.consensus.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;

import static org.junit.jupiter.api.Assertions.assertTrue;

class SampledWallClockTest
{
    @Test
    void staysWithinAMillisecondOfTheSystemClockAcrossResamples()
    {
        final SampledWallClock clock = new SampledWallClock(null);
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

    @Test
    void aTestOffsetFileStepsTheClockAtTheNextResampleAndBackWhenRemoved(@TempDir final Path dir) throws Exception
    {
        final Path offset = dir.resolve("offset");
        final SampledWallClock clock = new SampledWallClock(offset);
        final long before = TimeUnit.NANOSECONDS.toMillis(clock.nanoTime());
        assertTrue(Math.abs(before - System.currentTimeMillis()) <= 2, "no file: the system clock");

        Files.writeString(offset, "-60000");
        assertTrue(awaitRead(clock, ms -> ms < System.currentTimeMillis() - 59_000), "stepped back a minute");
        Files.delete(offset);
        assertTrue(awaitRead(clock, ms -> Math.abs(ms - System.currentTimeMillis()) <= 2), "and forward again");
    }

    private static boolean awaitRead(final SampledWallClock clock, final LongPredicate condition)
    {
        final long end = System.nanoTime() + 10 * SampledWallClock.RESAMPLE_NS;
        while (System.nanoTime() < end)
        {
            if (condition.test(TimeUnit.NANOSECONDS.toMillis(clock.nanoTime())))
            {
                return true;
            }
            Thread.onSpinWait();
        }
        return false;
    }
}
