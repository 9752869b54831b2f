package io.lockstep.cluster.client;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The messages a client has offered and the cluster has not yet acknowledged, in sequence order: copied once into
 * one preallocated byte ring (each message contiguous), indexed by a ring of slots. Adding and acknowledging
 * allocate nothing, so a gateway can offer on its hot path. Bounded twice: by slots (messages) and by bytes; either
 * full is back pressure.
 */
final class PendingMessages
{
    private final UnsafeBuffer bytes;
    private final int capacity;
    private final int[] offsets;
    private final int[] lengths;
    private long firstSequence;
    private int head;
    private int count;
    /** Byte offset after the newest message. */
    private int end;
    /** True while the newest messages sit before the oldest in the byte ring (it wrapped). */
    private boolean wrapped;

    /**
     * @param maxMessages slots.
     * @param byteCapacity bytes for message bodies (at least the longest message).
     */
    PendingMessages(final int maxMessages, final int byteCapacity)
    {
        this.bytes = new UnsafeBuffer(new byte[byteCapacity]);
        this.capacity = byteCapacity;
        this.offsets = new int[maxMessages];
        this.lengths = new int[maxMessages];
    }

    /**
     * @param sequence the message's sequence: the one after the newest held (or any, when empty).
     * @return false if there is no slot or no contiguous room for it (back pressure).
     */
    boolean add(final long sequence, final DirectBuffer src, final int offset, final int length)
    {
        if (count == offsets.length)
        {
            return false;
        }
        final int at;
        if (0 == count)
        {
            if (length > capacity)
            {
                return false;
            }
            firstSequence = sequence;
            wrapped = false;
            at = 0;
        }
        else
        {
            final int start = offsets[head];
            if (!wrapped && capacity - end >= length)
            {
                at = end;
            }
            else if (!wrapped && start >= length)
            {
                at = 0;
                wrapped = true;
            }
            else if (wrapped && start - end >= length)
            {
                at = end;
            }
            else
            {
                return false;
            }
        }
        final int slot = (head + count) % offsets.length;
        bytes.putBytes(at, src, offset, length);
        offsets[slot] = at;
        lengths[slot] = length;
        end = at + length;
        count++;
        return true;
    }

    /**
     * Drop every message up to and including this sequence (the cluster applied them).
     */
    void acknowledge(final long sequence)
    {
        while (count > 0 && firstSequence <= sequence)
        {
            final int oldStart = offsets[head];
            head = (head + 1) % offsets.length;
            count--;
            firstSequence++;
            if (0 == count)
            {
                end = 0;
                wrapped = false;
            }
            else if (wrapped && offsets[head] < oldStart)
            {
                // The oldest is now in the part that wrapped: the ring is in one piece again.
                wrapped = false;
            }
        }
    }

    void clear()
    {
        count = 0;
        end = 0;
        wrapped = false;
    }

    int size()
    {
        return count;
    }

    boolean isEmpty()
    {
        return 0 == count;
    }

    /** @return the sequence of message i (0 the oldest). */
    long sequenceAt(final int i)
    {
        return firstSequence + i;
    }

    int offsetAt(final int i)
    {
        return offsets[(head + i) % offsets.length];
    }

    int lengthAt(final int i)
    {
        return lengths[(head + i) % offsets.length];
    }

    /** @return the ring holding the bodies ({@link #offsetAt}, {@link #lengthAt}). */
    DirectBuffer buffer()
    {
        return bytes;
    }
}
