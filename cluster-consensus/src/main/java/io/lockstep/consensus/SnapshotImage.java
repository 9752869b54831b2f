package io.lockstep.consensus;

import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One snapshot held in memory: the fragments the container and the service wrote, in order, at one log position.
 * Taking a snapshot serialises state into an image (the only time the services pause); writing the image to disk
 * happens afterwards, off the duty cycle, by a {@link SnapshotStorage}. Once handed to storage an image is never
 * changed again.
 * <p>
 * Layout: {@code [int length][bytes]} per fragment, back to back, on the heap. An image can be {@link #reset} and
 * filled again once storage is done with it: a member keeps two and alternates (see {@code ServiceMember}), because
 * fresh memory for a large image costs more than serialising into it (measured: 70 to 90 ms to allocate and touch
 * 26 MB of direct memory, against 31 ms to encode a million orders into warm memory).
 */
public final class SnapshotImage implements SnapshotWriter
{
    /** Bound on one fragment: archive-log's snapshot frames take up to this, less their headers. */
    public static final int MAX_FRAGMENT_LENGTH = 1024 * 1024 - 64;
    /** Bound on a whole image: it is one array. */
    public static final int MAX_LENGTH = ExpandableArrayBuffer.MAX_ARRAY_LENGTH;

    private final ExpandableArrayBuffer data;
    private long logPosition;
    private long term;
    private long timestamp;
    private int length;
    private int fragmentCount;

    /**
     * @param logPosition     log position the snapshot covers (the end of the entry that asked for it).
     * @param term            term of that entry.
     * @param timestamp       log time of that entry.
     * @param initialCapacity bytes to start with; the image grows as needed.
     */
    public SnapshotImage(final long logPosition, final long term, final long timestamp, final int initialCapacity)
    {
        this.logPosition = logPosition;
        this.term = term;
        this.timestamp = timestamp;
        this.data = new ExpandableArrayBuffer(Math.max(64, initialCapacity));
    }

    /**
     * Empty the image for a new snapshot, keeping its memory.
     *
     * @return this.
     */
    public SnapshotImage reset(final long logPosition, final long term, final long timestamp)
    {
        this.logPosition = logPosition;
        this.term = term;
        this.timestamp = timestamp;
        this.length = 0;
        this.fragmentCount = 0;
        return this;
    }

    /**
     * @return bytes the image can hold before it grows.
     */
    public int capacity()
    {
        return data.capacity();
    }

    public long logPosition()
    {
        return logPosition;
    }

    public long term()
    {
        return term;
    }

    public long timestamp()
    {
        return timestamp;
    }

    public int fragmentCount()
    {
        return fragmentCount;
    }

    /**
     * @return bytes the image holds, fragment lengths included.
     */
    public int encodedLength()
    {
        return length;
    }

    public void append(final DirectBuffer buffer, final int offset, final int fragmentLength)
    {
        if (fragmentLength < 0 || fragmentLength > MAX_FRAGMENT_LENGTH)
        {
            throw new IllegalArgumentException("snapshot fragment length " + fragmentLength + " not in [0, " +
                MAX_FRAGMENT_LENGTH + "]");
        }
        if ((long)length + Integer.BYTES + fragmentLength > Integer.MAX_VALUE - 16)
        {
            throw new IllegalStateException("snapshot image exceeds 2 GiB at position " + logPosition);
        }
        data.putInt(length, fragmentLength);
        data.putBytes(length + Integer.BYTES, buffer, offset, fragmentLength);
        length += Integer.BYTES + fragmentLength;
        fragmentCount++;
    }

    public int maxFragmentLength()
    {
        return MAX_FRAGMENT_LENGTH;
    }

    /**
     * Hand every fragment to a handler, in order.
     */
    public void forEachFragment(final SnapshotReader.FragmentHandler handler)
    {
        for (int o = 0; o < length; )
        {
            final int fragmentLength = data.getInt(o);
            handler.onFragment(data, o + Integer.BYTES, fragmentLength);
            o += Integer.BYTES + fragmentLength;
        }
    }

    /**
     * @return a reader over the fragments from the first.
     */
    public Reader reader()
    {
        return new Reader();
    }

    /**
     * Reads an image's fragments in order; the container reads its own, then hands the same reader to the service.
     */
    public final class Reader implements SnapshotReader
    {
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        private int offset;

        public int poll(final FragmentHandler handler, final int maxFragments)
        {
            int count = 0;
            while (count < maxFragments && offset < length)
            {
                final int fragmentLength = data.getInt(offset);
                view.wrap(data, offset + Integer.BYTES, fragmentLength);
                offset += Integer.BYTES + fragmentLength;
                count++;
                handler.onFragment(view, 0, fragmentLength);
            }
            return count;
        }

        public boolean isDone()
        {
            return offset >= length;
        }
    }
}
