package io.lockstep.cluster.transport;

import org.agrona.concurrent.IdleStrategy;

/**
 * Idles a member's thread on its own sockets: a few spins, a few yields, then a wait in the selector (epoll) of up
 * to {@code maxWaitMs}, which returns the moment a message arrives. A parking backoff wakes on a timer instead:
 * it either sleeps through an arriving message (up to its longest park) or wakes often to find nothing, and each
 * wake is a select call. Work other than messages (timers, heartbeats, snapshot completion) waits at most
 * {@code maxWaitMs}, as it did under a backoff capped at that.
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

    private final TcpTransport transport;
    private final int maxSpins;
    private final int maxYields;
    private final long maxWaitMs;
    private int spins;
    private int yields;
    private SleepGuard guard = NO_GUARD;

    /**
     * @param transport whose sockets to wait on.
     * @param maxSpins  busy spins after work before yielding.
     * @param maxYields yields before waiting in the selector.
     * @param maxWaitMs longest wait in the selector (at least 1).
     */
    public SelectorIdleStrategy(final TcpTransport transport, final int maxSpins, final int maxYields, final long maxWaitMs)
    {
        if (maxWaitMs < 1)
        {
            throw new IllegalArgumentException("maxWaitMs must be at least 1: " + maxWaitMs);
        }
        this.transport = transport;
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
            transport.awaitReady(maxWaitMs);
            guard.afterSleep();
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
        spins = 0;
        yields = 0;
    }

    public String alias()
    {
        return "selector";
    }
}
