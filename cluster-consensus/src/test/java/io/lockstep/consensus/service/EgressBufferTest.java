package io.lockstep.consensus.service;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EgressBufferTest
{
    @Test
    void theRingStartsSmallAndGrowsToTheBoundKeepingEveryMessageBeforeItDropsAny()
    {
        final int bound = 256 * 1024;
        final EgressBuffer egress = new EgressBuffer(bound);
        assertEquals(EgressBuffer.INITIAL_LENGTH, egress.ringLength(), "an open session costs 4 KiB, not the bound");
        final Random random = new Random(11);
        long kept = 0;
        int appended = 0;
        // Messages of mixed sizes, so that records wrap at every point of the ring as it grows.
        while (egress.ringLength() < bound || egress.firstSequence() == 0)
        {
            final int length = random.nextInt(3000);
            egress.append(message(appended, Math.max(8, length)), 0, Math.max(8, length));
            appended++;
            if (egress.firstSequence() == 0)
            {
                kept = appended;
            }
        }
        assertEquals(bound, egress.ringLength(), "grown to the bound and no further");
        assertTrue(kept > 100, "nothing dropped until the bound was reached: " + kept + " messages held");
        final List<Long> replayed = new ArrayList<>();
        egress.replay(egress.firstSequence(), (sequence, buffer, offset, length) ->
        {
            assertEquals(sequence, buffer.getLong(offset), "each record intact after the ring was laid out again");
            replayed.add(sequence);
        });
        assertEquals(egress.nextSequence() - egress.firstSequence(), replayed.size());
    }

    @Test
    void replaysEverythingFromASequenceWhileItIsHeld()
    {
        final EgressBuffer egress = new EgressBuffer(1024);
        for (int i = 0; i < 5; i++)
        {
            assertEquals(i, egress.append(message(i, 20), 0, 20));
        }
        final List<Long> replayed = new ArrayList<>();
        assertEquals(3, egress.replay(2, (sequence, buffer, offset, length) ->
        {
            assertEquals(sequence, buffer.getLong(offset));
            replayed.add(sequence);
        }));
        assertEquals(List.of(2L, 3L, 4L), replayed);
        assertEquals(0, egress.replay(5, (s, b, o, l) -> { }), "nothing newer yet");
    }

    @Test
    void whenFullTheOldestGoAndAskingForThemIsAGap()
    {
        final EgressBuffer egress = new EgressBuffer(256);
        for (int i = 0; i < 100; i++)
        {
            egress.append(message(i, 40), 0, 40);
        }
        assertEquals(100, egress.nextSequence());
        final long first = egress.firstSequence();
        assertEquals(EgressBuffer.GAP, egress.replay(first - 1, (s, b, o, l) -> { }));
        final List<Long> replayed = new ArrayList<>();
        egress.replay(first, (sequence, buffer, offset, length) -> replayed.add(buffer.getLong(offset)));
        assertEquals(100 - first, replayed.size());
        assertEquals(first, (long)replayed.get(0));
        assertEquals(99L, (long)replayed.get(replayed.size() - 1));
    }

    @Test
    void randomSizesAcrossManyWrapsKeepSequencesAndContentIntact()
    {
        final Random random = new Random(7);
        final EgressBuffer egress = new EgressBuffer(4096);
        for (int i = 0; i < 20_000; i++)
        {
            final int length = 8 + random.nextInt(egress.maxMessageLength() - 8);
            assertEquals(i, egress.append(message(i, length), 0, length));
            if (i % 97 == 0)
            {
                final long[] expected = { egress.firstSequence() };
                egress.replay(egress.firstSequence(), (sequence, buffer, offset, len) ->
                {
                    assertEquals(expected[0]++, sequence, "contiguous");
                    assertEquals(sequence, buffer.getLong(offset), "content belongs to its sequence");
                });
                assertEquals(egress.nextSequence(), expected[0], "ends at the newest");
            }
        }
    }

    @Test
    void aMessageLongerThanHalfTheBufferIsRefused()
    {
        final EgressBuffer egress = new EgressBuffer(256);
        assertEquals(EgressBuffer.TOO_LONG, egress.append(new UnsafeBuffer(new byte[200]), 0, 200));
        assertEquals(0, egress.append(message(0, egress.maxMessageLength()), 0, egress.maxMessageLength()));
    }

    private static UnsafeBuffer message(final long sequence, final int length)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[Math.max(length, 8)]);
        buffer.putLong(0, sequence);
        return buffer;
    }
}
