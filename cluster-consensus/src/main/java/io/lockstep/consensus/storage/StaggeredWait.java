package io.lockstep.consensus.storage;

import java.util.concurrent.TimeUnit;

/**
 * A background thread's wait before slow file work that every member would otherwise start in the same millisecond:
 * members snapshot at the same log position, so without a wait their snapshot writes, and the purges after them,
 * land together, often on a segment rollover too, and on a small machine the members' threads then wait for a CPU
 * all at once (figures in benchmarks/results/history.md). Each member waits a different time, so that at most one
 * of them does such work at a time and the other two still make a quorum.
 * <p>
 * The thread waits until a time, or until the member's thread hurries it (before a reset, a close, or anything that
 * must see the work done): a wait only ever delays work, it never drops or reorders it.
 */
final class StaggeredWait
{
    /** Guards {@link #hurry}: the background thread waits on this. */
    private final Object lock = new Object();
    private boolean hurry;

    /** On the background thread: wait until a time ({@link System#nanoTime()}), or until hurried. */
    void awaitUntil(final long notBeforeNs)
    {
        synchronized (lock)
        {
            long remainingNs;
            while (!hurry && (remainingNs = notBeforeNs - System.nanoTime()) > 0)
            {
                try
                {
                    TimeUnit.NANOSECONDS.timedWait(lock, remainingNs);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** @return true while the member's thread wants the work done now. */
    boolean hurried()
    {
        synchronized (lock)
        {
            return hurry;
        }
    }

    /** @param now true: no more waiting (until set false again); false: waits hold again. */
    void hurry(final boolean now)
    {
        synchronized (lock)
        {
            hurry = now;
            lock.notifyAll();
        }
    }
}
