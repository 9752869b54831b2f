package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReadyKeysTest
{
    @Test
    void keysFoundByAWaitAreHandedOnOnceAndOverflowIsReportedAgainByTheNextSelect() throws Exception
    {
        try (Selector selector = Selector.open())
        {
            final List<Pipe> pipes = new ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                final Pipe pipe = Pipe.open();
                pipe.source().configureBlocking(false);
                pipe.source().register(selector, SelectionKey.OP_READ, i);
                pipe.sink().write(ByteBuffer.wrap(new byte[]{ 1 }));
                pipes.add(pipe);
            }
            final ReadyKeys woken = new ReadyKeys(2);
            assertTrue(woken.isEmpty());
            assertEquals(3, selector.select(woken, 1000), "all three are ready");
            assertFalse(woken.isEmpty());

            final List<Object> handled = new ArrayList<>();
            woken.drainTo(key -> handled.add(key.attachment()));
            assertEquals(2, handled.size(), "bounded: two kept of three");
            assertTrue(woken.isEmpty(), "drained");
            woken.drainTo(key -> handled.add(key.attachment()));
            assertEquals(2, handled.size(), "handed on once only");

            // Not lost: the one left out is still readable, so the next select reports it (with the others, unread).
            final Set<Object> again = new HashSet<>();
            selector.selectNow(key -> again.add(key.attachment()));
            assertEquals(Set.of(0, 1, 2), again);

            // A key cancelled between the wait and the drain (its connection dropped) is skipped.
            selector.select(woken, 1000);
            final SelectionKey cancelled = pipes.get(0).source().keyFor(selector);
            cancelled.cancel();
            final List<SelectionKey> valid = new ArrayList<>();
            woken.drainTo(valid::add);
            assertFalse(valid.contains(cancelled));
            for (final Pipe pipe : pipes)
            {
                pipe.sink().close();
                pipe.source().close();
            }
        }
    }
}
