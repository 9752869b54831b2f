package io.lockstep.consensus.storage;

import java.util.concurrent.TimeUnit;

/**
 * A background thread's wait before slow file work, which the member's thread can cut short. The storage classes
 * use it to start work a while after they are handed it, a different while on each member: members snapshot at the
 * same log position, so without a wait their snapshot writes, and the purges after them, start together, often on a
 * segment rollover too, and on a small machine every member's thread then waited for a CPU at once (figures in
 * benchmarks/results/history.md).
 * <p>
 * Two ways to end a wait: {@link #hurry(boolean)} holds until set false again (a reset or close that waits for the
 * work), {@link #cutShort()} ends the current wait, or the next one if none is under way (someone waits for the one
 * piece of work). A wait only ever delays work, it never drops or reorders it. One owner: the storage object that
 * made it, with one background thread.
 */
final class HurryableDelay
{
    /** Guards the two flags: the background thread waits on this. */
    private final Object lock = new Object();
    private boolean hurry;
    private boolean cut;

    /** On the background thread: wait until a time ({@link System#nanoTime()}), unless hurried or cut short. */
    void awaitUntil(final long notBeforeNs)
    {
        synchronized (lock)
        {
            long remainingNs;
            while (!hurry && !cut && (remainingNs = notBeforeNs - System.nanoTime()) > 0)
            {
                try
                {
                    TimeUnit.NANOSECONDS.timedWait(lock, remainingNs);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            cut = false;
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

    /** End the wait under way, or the next one if none is. */
    void cutShort()
    {
        synchronized (lock)
        {
            cut = true;
            lock.notifyAll();
        }
    }

    /**
     * New work is handed over and no wait is under way: a {@link #cutShort()} meant for earlier work (asked after its
     * wait had ended) does not carry over to it.
     */
    void forgetCut()
    {
        synchronized (lock)
        {
            cut = false;
        }
    }
}
