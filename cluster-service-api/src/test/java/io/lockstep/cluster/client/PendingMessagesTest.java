package io.lockstep.cluster.client;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PendingMessagesTest
{
    @Test
    void holdsExactlyWhatWasOfferedThroughRandomAddsAndAcknowledgements()
    {
        for (long seed = 1; seed <= 200; seed++)
        {
            final Random random = new Random(seed);
            final PendingMessages pending = new PendingMessages(16, 500);
            final ArrayDeque<byte[]> model = new ArrayDeque<>();
            long nextSequence = 0;
            long acked = -1;
            for (int op = 0; op < 2000; op++)
            {
                if (random.nextInt(3) > 0)
                {
                    final byte[] message = new byte[random.nextInt(120)];
                    random.nextBytes(message);
                    if (pending.add(nextSequence, new UnsafeBuffer(message), 0, message.length))
                    {
                        model.addLast(message);
                        nextSequence++;
                    }
                    else
                    {
                        assertTrue(pending.size() > 0, "seed " + seed + ": an empty ring takes any message");
                    }
                }
                else if (!model.isEmpty())
                {
                    final int drop = 1 + random.nextInt(model.size());
                    acked += drop;
                    pending.acknowledge(acked);
                    for (int i = 0; i < drop; i++)
                    {
                        model.pollFirst();
                    }
                }
                assertEquals(model.size(), pending.size(), "seed " + seed);
                int i = 0;
                for (final byte[] expected : model)
                {
                    assertEquals(acked + 1 + i, pending.sequenceAt(i), "seed " + seed);
                    final byte[] held = new byte[pending.lengthAt(i)];
                    pending.buffer().getBytes(pending.offsetAt(i), held);
                    assertArrayEquals(expected, held, "seed " + seed + " message " + i);
                    i++;
                }
            }
        }
    }

    @Test
    void fullSlotsOrBytesAreBackPressure()
    {
        final PendingMessages pending = new PendingMessages(2, 100);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[60]);
        assertTrue(pending.add(0, message, 0, 60));
        assertTrue(!pending.add(1, message, 0, 60), "60 more bytes do not fit in 100");
        assertTrue(pending.add(1, message, 0, 40));
        assertTrue(!pending.add(2, message, 0, 1), "two slots");
        pending.acknowledge(0);
        assertTrue(pending.add(2, message, 0, 60), "room at the front once the first is acknowledged");
        assertEquals(2, pending.sequenceAt(1));
    }
}
