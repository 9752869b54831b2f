package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client's view of a failover, against the echo service: numbered messages at a steady rate; every echo is
 * recorded, so that at the end each message acknowledged must have come back exactly once (nothing lost, nothing
 * applied twice), and the longest silence between echoes is the outage the client saw.
 */
final class EchoWorkload implements ClusterClient.EgressListener
{
    private ClusterClient client;
    private final long intervalNs;
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
    private final BitSet echoed = new BitSet();
    /** Send time of each message, by its number, for the round-trip latency of its echo. */
    private long[] sentNs = new long[1 << 16];
    private final Histogram latencies = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private int next;
    private long duplicates;
    private long lastEchoNs = -1;
    private long longestSilenceNs;
    private long nextSendNs;

    EchoWorkload(final int ratePerSecond)
    {
        this.intervalNs = TimeUnit.SECONDS.toNanos(1) / ratePerSecond;
    }

    /**
     * @param client made with this workload as its listener.
     * @return this.
     */
    EchoWorkload client(final ClusterClient client)
    {
        this.client = client;
        return this;
    }

    public void onMessage(
        final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final int id = buffer.getInt(offset);
        final long now = System.nanoTime();
        if (echoed.get(id))
        {
            duplicates++;
        }
        else if (id < next)
        {
            latencies.recordValue(Math.min(now - sentNs[id], latencies.getHighestTrackableValue()));
        }
        echoed.set(id);
        if (lastEchoNs > 0)
        {
            longestSilenceNs = Math.max(longestSilenceNs, now - lastEchoNs);
        }
        lastEchoNs = now;
    }

    /**
     * Send at the rate and poll, for a while.
     */
    void runFor(final long millis)
    {
        runUntil(() -> false, millis);
    }

    /**
     * Send at the rate and poll until the condition holds (or the time is up).
     *
     * @return true if the condition held.
     */
    boolean runUntil(final BooleanSupplier condition, final long maxMillis)
    {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        while (System.nanoTime() < end)
        {
            if (condition.getAsBoolean())
            {
                return true;
            }
            final long now = System.nanoTime();
            if (now >= nextSendNs)
            {
                message.putInt(0, next);
                if (client.offer(message, 0, message.capacity()) >= 0)
                {
                    if (next >= sentNs.length)
                    {
                        sentNs = Arrays.copyOf(sentNs, sentNs.length * 2);
                    }
                    sentNs[next] = now;
                    next++;
                    nextSendNs = (0 == nextSendNs ? now : nextSendNs) + intervalNs;
                }
            }
            if (0 == client.poll())
            {
                Thread.onSpinWait();
            }
        }
        return condition.getAsBoolean();
    }

    /**
     * Keep sending and polling while an action that blocks (a member's restart, which waits until it listens) runs
     * on a thread of its own: what the client sees meanwhile is the member's doing, not the harness's pause.
     *
     * @return true: the action finished within the time without throwing (otherwise this throws, naming where the
     * action was or what it threw).
     */
    boolean during(final Runnable action, final long maxMillis)
    {
        final Throwable[] failed = new Throwable[1];
        final Thread thread = new Thread(() ->
        {
            try
            {
                action.run();
            }
            catch (final Throwable t)
            {
                failed[0] = t;
            }
        }, "echo-workload-action");
        thread.setDaemon(true); // one that overran is left behind, never keeps the test's JVM alive
        thread.start();
        final boolean finished = runUntil(() -> !thread.isAlive(), maxMillis);
        if (!finished)
        {
            thread.interrupt();
            throw new AssertionError("the action run during the load did not finish within " + maxMillis +
                " ms; it was at " + Arrays.toString(thread.getStackTrace()));
        }
        if (null != failed[0])
        {
            throw new AssertionError("the action run during the load failed: " + failed[0], failed[0]);
        }
        return finished;
    }

    /**
     * Start a new window for {@link #longestSilenceMs()} at the next echo: a pause of the harness between windows
     * (a blocking status request) is not the cluster's.
     */
    void resetSilence()
    {
        longestSilenceNs = 0;
        lastEchoNs = -1;
    }

    /**
     * Stop sending; wait until every message sent is acknowledged and echoed; check exactly once.
     */
    void finishAndCheck(final long maxMillis, final String context)
    {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        while (echoed.cardinality() < next || client.acknowledgedSequence() < next - 1)
        {
            assertTrue(System.nanoTime() < end, context + ": " + echoed.cardinality() + " of " + next +
                " echoed, acknowledged up to " + client.acknowledgedSequence() + " after " + maxMillis + " ms");
            if (0 == client.poll())
            {
                Thread.onSpinWait();
            }
        }
        assertEquals(0, duplicates, context + ": messages applied twice");
        assertEquals(next, echoed.cardinality(), context + ": every message echoed once");
    }

    /**
     * @return round-trip latency of each echo, from the offer to the echo's arrival, ns (reset to start a window).
     */
    Histogram latencies()
    {
        return latencies;
    }

    int sent()
    {
        return next;
    }

    long longestSilenceMs()
    {
        return TimeUnit.NANOSECONDS.toMillis(longestSilenceNs);
    }
}
