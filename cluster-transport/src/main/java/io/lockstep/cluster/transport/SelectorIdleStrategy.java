package io.lockstep.cluster.transport;

import org.agrona.concurrent.IdleStrategy;

/**
 * Idles a member's thread on its own sockets: a few spins, a few yields, then a wait in the selector (epoll) of up
 * to {@code maxWaitMs}, which returns the moment a message arrives. A parking backoff wakes on a timer instead:
 * it either sleeps through an arriving message (up to its longest park) or wakes often to find nothing, and each
 * wake is a select call. Work other than messages (timers, heartbeats, snapshot completion) waits at most
 * {@code maxWaitMs}, as it did under a backoff capped at that.
 * <p>
 * The spins and yields are skipped while they keep finding nothing: after {@link #MISSES_TO_SKIP} idle periods in a
 * row that each ended in the selector, a period waits at once, except one in {@link #PROBE_INTERVAL}, which still
 * spins; work found by spinning or yielding brings them back for every period. Each spin is a duty cycle, that is
 * a poll of the sockets, so they cost a member CPU for every message. They pay where the next message comes within
 * them: a leader's second acknowledgement, a busy flow. A follower at a steady rate gets its next append well after
 * its spins end, and those spins were a third of its CPU; skipping them costs no p99 (figures in
 * benchmarks/results/history.md).
 */
public final class SelectorIdleStrategy implements IdleStrategy
{
    /**
     * Work that does not arrive on a socket but must end the wait: another thread's output (a DEDICATED member's
     * service thread). It is told before the wait and after, and wakes the selector ({@link TcpTransport#wakeup})
     * when it has work while the wait runs.
     */
    public interface SleepGuard
    {
        /**
         * Mark the thread as about to wait, then look for work once more.
         *
         * @return true to wait; false if work arrived (the mark is cleared).
         */
        boolean beforeSleep();

        /** The wait is over. */
        void afterSleep();
    }

    private static final SleepGuard NO_GUARD = new SleepGuard()
    {
        public boolean beforeSleep()
        {
            return true;
        }

        public void afterSleep()
        {
        }
    };

    /** Idle periods in a row that ended in the selector after which the spins and yields are skipped. */
    static final int MISSES_TO_SKIP = 8;
    /** While skipping, one idle period in this many still spins and yields, to find out whether they pay again. */
    static final int PROBE_INTERVAL = 8;

    /** The wait in the selector; an interface so that the spin policy can be tested without sockets. */
    interface Wait
    {
        void await(long timeoutMs);
    }

    private final Wait wait;
    private final int maxSpins;
    private final int maxYields;
    private final long maxWaitMs;
    private int spins;
    private int yields;
    /** An idle period is running: idle() was called since the last reset(). */
    private boolean idling;
    /** The current idle period reached the selector. */
    private boolean waited;
    /** Idle periods in a row that ended in the selector (at most MISSES_TO_SKIP). */
    private int misses;
    /** Idle periods since the last one that spun, while skipping. */
    private int skipped;
    private SleepGuard guard = NO_GUARD;

    /**
     * @param transport whose sockets to wait on.
     * @param maxSpins  busy spins after work before yielding.
     * @param maxYields yields before waiting in the selector.
     * @param maxWaitMs longest wait in the selector (at least 1).
     */
    public SelectorIdleStrategy(final TcpTransport transport, final int maxSpins, final int maxYields,
        final long maxWaitMs)
    {
        this(transport::awaitReady, maxSpins, maxYields, maxWaitMs);
    }

    SelectorIdleStrategy(final Wait wait, final int maxSpins, final int maxYields, final long maxWaitMs)
    {
        if (maxWaitMs < 1)
        {
            throw new IllegalArgumentException("maxWaitMs must be at least 1: " + maxWaitMs);
        }
        this.wait = wait;
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.maxWaitMs = maxWaitMs;
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    public void idle()
    {
        if (!idling)
        {
            idling = true;
            skipSpinsIfTheyFindNothing();
        }
        if (spins < maxSpins)
        {
            spins++;
            Thread.onSpinWait();
        }
        else if (yields < maxYields)
        {
            yields++;
            Thread.yield();
        }
        else if (guard.beforeSleep())
        {
            waited = true;
            wait.await(maxWaitMs);
            guard.afterSleep();
        }
    }

    private void skipSpinsIfTheyFindNothing()
    {
        if (misses >= MISSES_TO_SKIP && ++skipped < PROBE_INTERVAL)
        {
            spins = maxSpins;
            yields = maxYields;
        }
        else
        {
            skipped = 0;
        }
    }

    /**
     * @param guard told before and after each wait in the selector (set before the thread starts).
     * @return this.
     */
    public SelectorIdleStrategy sleepGuard(final SleepGuard guard)
    {
        this.guard = guard;
        return this;
    }

    public void reset()
    {
        if (idling)
        {
            // A period that never reached the selector ended in work found by a spin, a yield or the guard.
            misses = waited ? Math.min(misses + 1, MISSES_TO_SKIP) : 0;
        }
        idling = false;
        waited = false;
        spins = 0;
        yields = 0;
    }

    public String alias()
    {
        return "selector";
    }
}
