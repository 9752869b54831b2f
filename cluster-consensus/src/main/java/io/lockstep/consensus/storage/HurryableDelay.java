package io.lockstep.consensus.storage;

import java.util.concurrent.TimeUnit;

/**
 * A background thread's wait before slow file work, which the member's thread can cut short. The storage classes
 * use it to start work a while after they are handed it, a different while on each member: members snapshot at the
 * same log position, so without a wait their snapshot writes, and the purges after them, start together, often on a
 * segment rollover too, and on a small machine every member's thread then waited for a CPU at once (figures in
 * benchmarks/results/history.md).
 * <p>
 * {@link #hurry(boolean)} ends the wait under way and any later one until it is set false again: a reset or close
 * that waits for the work, or someone who waits for the one piece of work under way (set false again when the next
 * is handed over). A wait only ever delays work, it never drops or reorders it. One owner: the storage object that
 * made it, with one background thread.
 */
final class HurryableDelay
{
    /** Guards {@link #hurry}: the background thread waits on this. */
    private final Object lock = new Object();
    private boolean hurry;

    /** On the background thread: wait until a time ({@link System#nanoTime()}), unless hurried. */
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

    /** @param now true: no more waiting, until set false again; false: waits hold again. */
    void hurry(final boolean now)
    {
        synchronized (lock)
        {
            hurry = now;
            lock.notifyAll();
        }
    }
}
