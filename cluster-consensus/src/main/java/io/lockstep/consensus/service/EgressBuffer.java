package io.lockstep.consensus.service;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The most recent egress of one client session, kept by every member, so that after a failover the new leader can
 * resend what the client had not received. Egress is produced while applying the log, so every member's buffer holds
 * the same messages with the same sequence numbers. Bounded: when full, the oldest messages are dropped, and a
 * client that asks for one of those is told so ({@link #GAP}), never silently skipped.
 * <p>
 * Layout: records in a ring of bytes, each {@code [int length][long sequence][bytes]} padded to 8; a record never
 * wraps: a length of {@link #WRAP} at the end of the ring means the next record starts at 0.
 */
public final class EgressBuffer
{
    /** Returned by {@link #replay} when the first sequence asked for is no longer held. */
    public static final int GAP = -1;
    /** Returned by {@link #append} when a message is longer than {@link #maxMessageLength()}. */
    public static final long TOO_LONG = -5;

    private static final int HEADER = Integer.BYTES + Long.BYTES;
    private static final int WRAP = -1;

    /** Receives replayed messages. */
    @FunctionalInterface
    public interface EgressHandler
    {
        void onEgress(long sequence, DirectBuffer buffer, int offset, int length);
    }

    private final UnsafeBuffer ring;
    private final int capacity;
    private int head;
    private int tail;
    private int used;
    private long firstSequence;
    private long nextSequence;

    /**
     * @param capacity bytes kept; a multiple of 8, at least 64.
     */
    public EgressBuffer(final int capacity)
    {
        if (capacity < 64 || (capacity & 7) != 0)
        {
            throw new IllegalArgumentException("capacity must be a multiple of 8 and at least 64: " + capacity);
        }
        this.capacity = capacity;
        this.ring = new UnsafeBuffer(new byte[capacity]);
    }

    /**
     * @return the longest message the buffer can hold.
     */
    public int maxMessageLength()
    {
        return capacity / 2 - HEADER;
    }

    /**
     * Keep a message, dropping the oldest ones if needed.
     *
     * @return its sequence number, or {@link #TOO_LONG}.
     */
    public long append(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < 0 || length > maxMessageLength())
        {
            return TOO_LONG;
        }
        final int recordLength = align(HEADER + length);
        if (capacity - tail < recordLength)
        {
            // No room before the end: mark the rest as skipped (counted as used) and wrap.
            makeRoom(capacity - tail);
            if (capacity - tail >= Integer.BYTES)
            {
                ring.putInt(tail, WRAP);
            }
            used += capacity - tail;
            tail = 0;
        }
        makeRoom(recordLength);
        ring.putInt(tail, length);
        ring.putLong(tail + Integer.BYTES, nextSequence);
        ring.putBytes(tail + HEADER, buffer, offset, length);
        tail = (tail + recordLength) % capacity;
        used += recordLength;
        return nextSequence++;
    }

    /**
     * Hand every held message from a sequence onward to a handler.
     *
     * @param fromSequence the first sequence wanted.
     * @return messages handed out, or {@link #GAP} if fromSequence is older than the oldest held.
     */
    public int replay(final long fromSequence, final EgressHandler handler)
    {
        if (fromSequence < firstSequence)
        {
            return GAP;
        }
        int count = 0;
        int position = head;
        int remaining = used;
        while (remaining > 0)
        {
            final int length = capacity - position >= Integer.BYTES ? ring.getInt(position) : WRAP;
            if (WRAP == length)
            {
                remaining -= capacity - position;
                position = 0;
                continue;
            }
            final long sequence = ring.getLong(position + Integer.BYTES);
            if (sequence >= fromSequence)
            {
                handler.onEgress(sequence, ring, position + HEADER, length);
                count++;
            }
            final int recordLength = align(HEADER + length);
            position = (position + recordLength) % capacity;
            remaining -= recordLength;
        }
        return count;
    }

    /**
     * @return the oldest sequence held (equal to {@link #nextSequence()} when empty).
     */
    public long firstSequence()
    {
        return firstSequence;
    }

    /**
     * @return the sequence the next message will get.
     */
    public long nextSequence()
    {
        return nextSequence;
    }

    /**
     * @return the ring's bytes, for a snapshot (with {@link #head}, {@link #tail} and {@link #used}).
     */
    DirectBuffer ring()
    {
        return ring;
    }

    int capacity()
    {
        return capacity;
    }

    int head()
    {
        return head;
    }

    int tail()
    {
        return tail;
    }

    int used()
    {
        return used;
    }

    /**
     * Take the state a snapshot recorded.
     */
    void restore(
        final long firstSequence, final long nextSequence, final int head, final int tail, final int used,
        final DirectBuffer bytes, final int offset, final int length)
    {
        if (length != capacity || head < 0 || head >= capacity || tail < 0 || tail >= capacity || used < 0 ||
            used > capacity || firstSequence > nextSequence)
        {
            throw new IllegalStateException("snapshot egress buffer does not fit: capacity " + length + " (this " +
                "member keeps " + capacity + "), head " + head + ", tail " + tail + ", used " + used);
        }
        ring.putBytes(0, bytes, offset, length);
        this.firstSequence = firstSequence;
        this.nextSequence = nextSequence;
        this.head = head;
        this.tail = tail;
        this.used = used;
    }

    private void makeRoom(final int bytes)
    {
        while (capacity - used < bytes)
        {
            final int length = capacity - head >= Integer.BYTES ? ring.getInt(head) : WRAP;
            if (WRAP == length)
            {
                used -= capacity - head;
                head = 0;
                continue;
            }
            final int recordLength = align(HEADER + length);
            head = (head + recordLength) % capacity;
            used -= recordLength;
            firstSequence++;
        }
    }

    private static int align(final int length)
    {
        return (length + 7) & ~7;
    }
}
