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

    @Test
    void offersEveryDueMessageUpToTheBoundBeforeEachPollInOrder()
    {
        final RecordingClient client = new RecordingClient(Integer.MAX_VALUE);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
        final Histogram sendLate = new Histogram(3);
        final long now = System.nanoTime();
        final long start = now - 100 * INTERVAL_NS; // a hundred already due: the client is behind

        final long next = SendPacer.pace(client, message, 64, start, INTERVAL_NS, 0,
            now + TimeUnit.MILLISECONDS.toNanos(20), sendLate);

        assertEquals(SendPacer.MAX_BURST, client.offersPerPoll.get(0), "a full burst before the first poll");
        assertTrue(client.offersPerPoll.get(1) >= 100 - SendPacer.MAX_BURST, "then the rest of what was due");
        for (final int offers : client.offersPerPoll)
        {
            assertTrue(offers <= SendPacer.MAX_BURST, "never more than a burst between polls: " + offers);
        }
        assertEquals(client.dues.size(), next, "the next index is the count taken");
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

        SendPacer.pace(client, message, 64, start, INTERVAL_NS, 0, now + TimeUnit.MILLISECONDS.toNanos(20),
            sendLate);

        assertEquals(3, client.offersPerPoll.get(0), "back pressure after three ends the burst");
        assertEquals(start + 3 * INTERVAL_NS, client.refusedDue, "the refused one was the fourth");
        assertEquals(start + 3 * INTERVAL_NS, client.dues.get(3), "and it is the next one taken");
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
            return 1;
        }
    }
}
