package io.lockstep.consensus.storage;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StorageThreadsTest
{
    private static List<Thread> threadsNamed(final String name)
    {
        final List<Thread> found = new ArrayList<>();
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            if (name.equals(thread.getName()) && thread.isAlive())
            {
                found.add(thread);
            }
        }
        return found;
    }

    @Test
    void theThreadRunsBeforeTheFirstTaskAndTakesTasksInOrder() throws Exception
    {
        final String name = "storage-threads-test-" + System.nanoTime();
        final ExecutorService executor = StorageThreads.started(name);
        try
        {
            final List<Thread> threads = threadsNamed(name);
            assertEquals(1, threads.size(), "started with the executor, not with the first task");
            assertTrue(threads.get(0).isDaemon());

            final List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            final List<String> ranOn = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < 100; i++)
            {
                final int index = i;
                executor.execute(() ->
                {
                    order.add(index);
                    ranOn.add(Thread.currentThread().getName());
                });
            }
            executor.shutdown();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
            for (int i = 0; i < 100; i++)
            {
                assertEquals(i, order.get(i));
                assertEquals(name, ranOn.get(i));
            }
            threads.get(0).join(10_000);
            assertFalse(threads.get(0).isAlive(), "shutdown ends the thread");
        }
        finally
        {
            executor.shutdownNow();
        }
    }
}
