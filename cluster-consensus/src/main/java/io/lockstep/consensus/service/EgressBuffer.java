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
 * <p>
 * The ring starts at {@value #INITIAL_LENGTH} bytes and doubles, records laid out again from 0, as egress needs room,
 * up to the capacity; only then are the oldest records dropped. A session costs its members what its egress
 * needs, not the bound, so that opening sessions is no way to make every member hold memory. Growth happens while
 * applying the log, in the same place on every member.
 */
public final class EgressBuffer
{
    /** Returned by {@link #replay} when the first sequence asked for is no longer held. */
    public static final int GAP = -1;
    /** Returned by {@link #append} when a message is longer than {@link #maxMessageLength()}. */
    public static final long TOO_LONG = -5;

    private static final int HEADER = Integer.BYTES + Long.BYTES;
    private static final int WRAP = -1;
    static final int INITIAL_LENGTH = 4096;

    /** Receives replayed messages. */
    @FunctionalInterface
    public interface EgressHandler
    {
        void onEgress(long sequence, DirectBuffer buffer, int offset, int length);
    }

    private UnsafeBuffer ring;
    /** The ring's current length: at most {@link #capacity}. */
    private int ringLength;
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
        this.ringLength = Math.min(INITIAL_LENGTH, capacity);
        this.ring = new UnsafeBuffer(new byte[ringLength]);
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
        // Room for the record, and for the end of the ring it may have to skip: grow rather than drop.
        while (ringLength < capacity && ringLength - used < 2 * recordLength)
        {
            grow();
        }
        if (ringLength - tail < recordLength)
        {
            // No room before the end: mark the rest as skipped (counted as used) and wrap.
            makeRoom(ringLength - tail);
            if (ringLength - tail >= Integer.BYTES)
            {
                ring.putInt(tail, WRAP);
            }
            used += ringLength - tail;
            tail = 0;
        }
        makeRoom(recordLength);
        ring.putInt(tail, length);
        ring.putLong(tail + Integer.BYTES, nextSequence);
        ring.putBytes(tail + HEADER, buffer, offset, length);
        tail = (tail + recordLength) % ringLength;
        used += recordLength;
        return nextSequence++;
    }

    /**
     * Double the ring (to the capacity at most), laying the held records out again from 0 in order: the skipped end
     * of the old ring is not copied.
     */
    private void grow()
    {
        final int grown = Math.min(capacity, 2 * ringLength);
        final UnsafeBuffer larger = new UnsafeBuffer(new byte[grown]);
        int position = head;
        int remaining = used;
        int at = 0;
        while (remaining > 0)
        {
            final int messageLength = ringLength - position >= Integer.BYTES ? ring.getInt(position) : WRAP;
            if (WRAP == messageLength)
            {
                remaining -= ringLength - position;
                position = 0;
                continue;
            }
            final int recordLength = align(HEADER + messageLength);
            larger.putBytes(at, ring, position, recordLength);
            at += recordLength;
            position = (position + recordLength) % ringLength;
            remaining -= recordLength;
        }
        ring = larger;
        ringLength = grown;
        head = 0;
        tail = at % grown;
        used = at;
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
            final int length = ringLength - position >= Integer.BYTES ? ring.getInt(position) : WRAP;
            if (WRAP == length)
            {
                remaining -= ringLength - position;
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
            position = (position + recordLength) % ringLength;
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
     * @return the ring's bytes, for a snapshot (with {@link #ringLength}, {@link #head}, {@link #tail} and
     * {@link #used}).
     */
    DirectBuffer ring()
    {
        return ring;
    }

    /**
     * @return how long the ring is now: what a snapshot records.
     */
    int ringLength()
    {
        return ringLength;
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
        if (length > capacity || length < Math.min(INITIAL_LENGTH, capacity) || (length & 7) != 0 || head < 0 ||
            head >= length || tail < 0 || tail >= length || used < 0 || used > length || firstSequence > nextSequence)
        {
            throw new IllegalStateException("snapshot egress buffer does not fit: ring of " + length + " bytes (this " +
                "member keeps up to " + capacity + "), head " + head + ", tail " + tail + ", used " + used);
        }
        this.ring = new UnsafeBuffer(new byte[length]);
        this.ringLength = length;
        ring.putBytes(0, bytes, offset, length);
        this.firstSequence = firstSequence;
        this.nextSequence = nextSequence;
        this.head = head;
        this.tail = tail;
        this.used = used;
    }

    private void makeRoom(final int bytes)
    {
        while (ringLength - used < bytes)
        {
            final int length = ringLength - head >= Integer.BYTES ? ring.getInt(head) : WRAP;
            if (WRAP == length)
            {
                used -= ringLength - head;
                head = 0;
                continue;
            }
            final int recordLength = align(HEADER + length);
            head = (head + recordLength) % ringLength;
            used -= recordLength;
            firstSequence++;
        }
    }

    private static int align(final int length)
    {
        return (length + 7) & ~7;
    }
}
