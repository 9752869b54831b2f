package io.lockstep.archive;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class BackgroundPriorityTest
{
    /** Linux with renice: where members lower their threads. Elsewhere there is nothing to check. */
    private static void assumeLinuxWithRenice()
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "no /proc/thread-self");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/renice")) || Files.isExecutable(Path.of("/bin/renice")),
            "no renice");
    }

    @Test
    void aBackgroundThreadLowersItsOwnPriorityOnceAndNeverRaisesIt() throws Exception
    {
        assumeLinuxWithRenice();
        final int start = BackgroundPriority.currentNice();
        assumeTrue(start < 7, "this JVM already runs at nice " + start);
        final int[] seen = new int[3];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread = new Thread(() ->
        {
            try
            {
                BackgroundPriority.nice(7);
                BackgroundPriority.lowerThisThread();
                seen[0] = BackgroundPriority.currentNice();
                BackgroundPriority.nice(Math.max(1, start));
                BackgroundPriority.lowerThisThread();
                seen[1] = BackgroundPriority.currentNice();
                BackgroundPriority.nice(0);
                BackgroundPriority.lowerThisThread();
                seen[2] = BackgroundPriority.currentNice();
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
        assertFalse(thread.isAlive());
        assertNull(failure.get());
        assertArrayEquals(new int[]{ 7, 7, 7 }, seen, "lowered to 7, then neither raised nor reset");
        assertEquals(start, BackgroundPriority.currentNice(), "only the thread that asked was lowered");
    }

    @Test
    void anExecutorsThreadTakesTheValueAskedForAfterItStarted() throws Exception
    {
        assumeLinuxWithRenice();
        final int start = BackgroundPriority.currentNice();
        assumeTrue(start < 5, "this JVM already runs at nice " + start);
        final ExecutorService executor = BackgroundPriority.singleThreadExecutor("priority-test");
        try
        {
            assertEquals(start, executor.submit(BackgroundPriority::currentNice).get(30, TimeUnit.SECONDS),
                "started with nothing asked: left as it was");
            BackgroundPriority.nice(5);
            assertEquals(5, executor.submit(BackgroundPriority::currentNice).get(30, TimeUnit.SECONDS),
                "lowered before its next task");
        }
        finally
        {
            BackgroundPriority.nice(0);
            executor.shutdownNow();
        }
    }

    @Test
    void aNiceValueOutsideLinuxsRangeIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> BackgroundPriority.nice(20));
        assertThrows(IllegalArgumentException.class, () -> BackgroundPriority.nice(-1));
    }
}
