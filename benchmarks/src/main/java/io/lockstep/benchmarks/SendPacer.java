package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.locks.LockSupport;

/**
 * How an open-loop client waits for its next send, the same for both systems and the do-nothing echo: with nothing
 * to receive and the next send not yet due, it parks. On two cores every microsecond the client spins is taken from
 * the members it measures.
 * <p>
 * Measured here (Lockstep, after the rollover and snapshot stalls were removed; three runs of each, interleaved),
 * against the earlier rule of spinning when the next send was under 60 us away:
 * <ul>
 *     <li>spinning within 60 us: p99 0.6-1.9 ms at 1k, 1.0-2.5 ms at 5k, 1.9-3.5 ms at 10k, 5.6-6.5 ms at 20k,
 *     4.0-5.4 ms at 40k;</li>
 *     <li>parking always: p99 0.5-0.7 ms at 1k, 0.5-0.8 ms at 5k, 0.6-1.2 ms at 10k, 1.8-5.3 ms at 20k,
 *     1.7-2.5 ms at 40k; p50 50 us higher at 1k and 5k and 200-260 us instead of 140-160 at 20k, because a park
 *     wakes 50-60 us late here;</li>
 *     <li>yielding instead of spinning: in between (1.5-2.3, 2.8-3.5, 2.0-5.4 ms at 10k, 20k, 40k).</li>
 * </ul>
 * A send that is late is still measured from its intended time, so the cost of parking is in every figure, and the
 * {@code late_p99} column says how late the client itself was.
 */
public final class SendPacer
{
    static final long PARK_NS = 20_000;
    /**
     * The most messages offered before the next poll. Everything due is offered first, as a gateway passing on a
     * burst of orders would, so that a client which sends on poll (Lockstep's, the relay's) sends them in one write;
     * the bound keeps receiving going when the client has fallen far behind. Offering one message per poll instead
     * made the benchmark's client spend a write system call on every message: at 300,000 msg/s it was the busiest
     * process on the machine (2.3 us of CPU per message against 1.2-1.4 us this way), and the members' figures
     * measured how the client shared two cores with them as much as the members themselves.
     */
    static final int MAX_BURST = 64;

    private SendPacer()
    {
    }

    /**
     * Call when the client had no work: parks if the next send is not yet due.
     *
     * @param nextDueNs intended time of the next send ({@link System#nanoTime()} base).
     */
    public static void restIfEarly(final long nextDueNs)
    {
        if (nextDueNs - System.nanoTime() > 0)
        {
            LockSupport.parkNanos(PARK_NS);
        }
    }

    /**
     * What the pacing loop needs of a cluster's client: Lockstep's and Aeron's each behind one of these.
     */
    public interface Client
    {
        /**
         * @return true if the message was taken (false: back pressure, try again).
         */
        boolean offer(UnsafeBuffer message, int length);

        /**
         * @return work done receiving; 0 if there was none.
         */
        int poll();
    }

    /**
     * Offer message {@code index} onward as each falls due (its intended send time in its first 8 bytes; every
     * message due, up to {@link #MAX_BURST}, before the next poll), and poll, until {@code until}: open loop.
     * Warm-up and measurement are two calls of this one loop, recording alike, so that no branch first taken at the
     * start of the measurement deoptimises the compiled loop there (it did: the loop was made not entrant at that
     * instant and compiled again about a second later, inside the window).
     *
     * @param sendLate records how late each send was against its intended time.
     * @return the index of the next message to send.
     */
    public static long pace(final Client client, final UnsafeBuffer message, final int length, final long start,
        final long intervalNs, final long fromIndex, final long until, final Histogram sendLate)
    {
        long index = fromIndex;
        long now;
        while ((now = System.nanoTime()) < until)
        {
            long due = start + index * intervalNs;
            for (int burst = 0; now >= due && burst < MAX_BURST; burst++)
            {
                message.putLong(0, due);
                if (!client.offer(message, length))
                {
                    break;
                }
                index++;
                sendLate.recordValue(now - due);
                due = start + index * intervalNs;
            }
            if (0 == client.poll())
            {
                restIfEarly(start + index * intervalNs);
            }
        }
        return index;
    }
}
