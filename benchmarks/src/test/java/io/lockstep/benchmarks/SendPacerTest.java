package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SendPacerTest
{
    private static final long INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(10);
    private static final int POLLS = 5;

    @Test
    void offersEveryDueMessageUpToTheBoundBeforeEachPollInOrder()
    {
        final RecordingClient client = new RecordingClient(Integer.MAX_VALUE);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
        final Histogram sendLate = new Histogram(3);
        final long now = System.nanoTime();
        final long start = now - 100 * INTERVAL_NS; // a hundred already due: the client is behind

        pace(client, message, start, sendLate);

        assertEquals(SendPacer.MAX_BURST, client.offersPerPoll.get(0), "a full burst before the first poll");
        assertTrue(client.offersPerPoll.get(1) >= 100 - SendPacer.MAX_BURST, "then the rest of what was due");
        for (final int offers : client.offersPerPoll)
        {
            assertTrue(offers <= SendPacer.MAX_BURST, "never more than a burst between polls: " + offers);
        }
        for (int i = 0; i < client.dues.size(); i++)
        {
            assertEquals(start + i * INTERVAL_NS, client.dues.get(i), "message " + i + " carries its intended time");
        }
    }

    @Test
    void aRefusedMessageEndsTheBurstAndIsOfferedAgainWithTheSameTime()
    {
        final RecordingClient client = new RecordingClient(3);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
        final Histogram sendLate = new Histogram(3);
        final long now = System.nanoTime();
        final long start = now - 100 * INTERVAL_NS;

        pace(client, message, start, sendLate);

        assertEquals(3, client.offersPerPoll.get(0), "back pressure after three ends the burst");
        assertEquals(start + 3 * INTERVAL_NS, client.refusedDue, "the refused one was the fourth");
        assertEquals(start + 3 * INTERVAL_NS, client.dues.get(3), "and it is the next one taken");
    }

    /**
     * Pace until the client has been polled a few times: ends on the client's count, not on the clock, so a thread
     * descheduled for a while still sees the same polls.
     */
    private static void pace(final RecordingClient client, final UnsafeBuffer message, final long start,
        final Histogram sendLate)
    {
        try
        {
            SendPacer.pace(client, message, 64, start, INTERVAL_NS, 0, Long.MAX_VALUE, sendLate);
            throw new AssertionError("the pacer stopped before the client had been polled enough");
        }
        catch (final Enough enough)
        {
            // Polled enough.
        }
    }

    /** Thrown by the client's poll to end the pacing loop. */
    private static final class Enough extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        Enough()
        {
            super(null, null, false, false);
        }
    }

    /** Takes up to {@code acceptPerPoll} messages between polls, and records what it was given. */
    private static final class RecordingClient implements SendPacer.Client
    {
        final List<Integer> offersPerPoll = new ArrayList<>();
        final List<Long> dues = new ArrayList<>();
        final int acceptPerPoll;
        int sincePoll;
        long refusedDue = -1;

        RecordingClient(final int acceptPerPoll)
        {
            this.acceptPerPoll = acceptPerPoll;
        }

        public boolean offer(final UnsafeBuffer message, final int length)
        {
            if (sincePoll == acceptPerPoll)
            {
                if (-1 == refusedDue)
                {
                    refusedDue = message.getLong(0);
                }
                return false;
            }
            dues.add(message.getLong(0));
            sincePoll++;
            return true;
        }

        public int poll()
        {
            offersPerPoll.add(sincePoll);
            sincePoll = 0;
            if (offersPerPoll.size() == POLLS)
            {
                throw new Enough();
            }
            return 1;
        }
    }
}
