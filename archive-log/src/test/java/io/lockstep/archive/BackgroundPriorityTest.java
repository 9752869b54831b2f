package io.lockstep.archive;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class BackgroundPriorityTest
{
    @Test
    void aBackgroundThreadLowersItsOwnPriorityOnceAndNeverRaisesIt() throws Exception
    {
        final int[] seen = new int[4];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread = new Thread(() ->
        {
            try
            {
                seen[0] = BackgroundPriority.currentNice();
                BackgroundPriority.nice(7);
                BackgroundPriority.lowerThisThread();
                seen[1] = BackgroundPriority.currentNice();
                BackgroundPriority.nice(3);
                BackgroundPriority.lowerThisThread();
                seen[2] = BackgroundPriority.currentNice();
                BackgroundPriority.nice(0);
                BackgroundPriority.lowerThisThread();
                seen[3] = BackgroundPriority.currentNice();
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
            finally
            {
                BackgroundPriority.nice(0); // JVM-wide: leave other tests' threads alone
            }
        });
        thread.start();
        thread.join(30_000);
        assertNull(failure.get());
        assertArrayEquals(new int[]{ 0, 7, 7, 7 }, seen, "lowered to 7, then neither raised to 3 nor reset by 0");
        assertEquals(0, BackgroundPriority.currentNice(), "only the thread that asked was lowered");
    }

    @Test
    void aNiceValueOutsideLinuxsRangeIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> BackgroundPriority.nice(20));
        assertThrows(IllegalArgumentException.class, () -> BackgroundPriority.nice(-1));
    }
}
