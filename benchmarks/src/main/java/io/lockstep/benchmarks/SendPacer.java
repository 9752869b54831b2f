package io.lockstep.benchmarks;

import java.util.concurrent.locks.LockSupport;

/**
 * How an open-loop client waits for its next send, the same for both systems. On two cores a client spinning
 * between sends takes a core the members need (measured: 97% CPU at 10k msg/s, and Lockstep's p99 3-4 ms; parking
 * when a send is more than 60 us off: 30% CPU, p99 0.5-0.7 ms). parkNanos(20 us) wakes 50-60 us late here, so the
 * client parks only when the next send is further off than that; a send that is late anyway is still measured from
 * its intended time.
 */
public final class SendPacer
{
    static final long REST_THRESHOLD_NS = 60_000;
    static final long PARK_NS = 20_000;

    private SendPacer()
    {
    }

    /**
     * Call when the client had no work: parks if the next send is not due soon.
     *
     * @param nextDueNs intended time of the next send ({@link System#nanoTime()} base).
     */
    public static void restIfEarly(final long nextDueNs)
    {
        if (nextDueNs - System.nanoTime() > REST_THRESHOLD_NS)
        {
            LockSupport.parkNanos(PARK_NS);
        }
    }
}
