package io.lockstep.cluster.transport;

import java.nio.channels.SelectionKey;
import java.util.function.Consumer;

/**
 * The keys an idle wait found ready, kept for the poll that follows so that it handles them without asking the
 * selector again: a member woken by a message then makes one {@code epoll_wait} for it, not two. Bounded; a key that
 * does not fit is not lost, because readiness is level-triggered: the next poll's own select reports it again.
 */
final class ReadyKeys implements Consumer<SelectionKey>
{
    private final SelectionKey[] keys;
    private int count;

    ReadyKeys(final int capacity)
    {
        keys = new SelectionKey[capacity];
    }

    public void accept(final SelectionKey key)
    {
        if (count < keys.length)
        {
            keys[count++] = key;
        }
    }

    boolean isEmpty()
    {
        return 0 == count;
    }

    /**
     * Hand each kept key still valid to the handler (one may have been cancelled since: its connection dropped), and
     * forget them all.
     */
    void drainTo(final Consumer<SelectionKey> handler)
    {
        final int n = count;
        count = 0;
        for (int i = 0; i < n; i++)
        {
            final SelectionKey key = keys[i];
            keys[i] = null;
            if (key.isValid())
            {
                handler.accept(key);
            }
        }
    }
}
