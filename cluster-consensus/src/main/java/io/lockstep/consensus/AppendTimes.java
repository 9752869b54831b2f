package io.lockstep.consensus;

/**
 * When the leader's log reached each position, recently: a ring of (position, monotonic time) samples, one per duty
 * cycle that appended, so that a follower's lag can be told in time as well as bytes: how long ago the leader had
 * the first byte the follower still lacks. Bounded ({@link #CAPACITY} samples; a follower further behind than the
 * oldest reads as lagging since then, a lower bound). Member thread only; no allocation after construction.
 */
final class AppendTimes
{
    static final int CAPACITY = 1024;
    private final long[] positions = new long[CAPACITY];
    private final long[] times = new long[CAPACITY];
    /** Samples ever added; the newest is at (count - 1) % CAPACITY. */
    private long count;

    /**
     * Forget every sample (a new term: positions before it were appended by another leader).
     */
    void clear()
    {
        count = 0;
    }

    /**
     * @param position the log's end after this duty cycle's appends.
     * @param nowNs    the duty cycle's clock reading.
     */
    void onAppended(final long position, final long nowNs)
    {
        if (count > 0 && positions[(int)((count - 1) % CAPACITY)] >= position)
        {
            return;
        }
        final int slot = (int)(count % CAPACITY);
        positions[slot] = position;
        times[slot] = nowNs;
        count++;
    }

    /**
     * @param matchPosition what the follower holds.
     * @param endPosition   the leader's log end.
     * @return nanoseconds since the leader first held a byte past matchPosition; 0 if the follower has it all or
     * nothing is known.
     */
    long lagNs(final long matchPosition, final long endPosition, final long nowNs)
    {
        if (matchPosition >= endPosition || 0 == count)
        {
            return 0;
        }
        // The oldest sample whose position is past matchPosition: samples are in position order around the ring.
        long low = Math.max(0, count - CAPACITY);
        long high = count - 1;
        if (positions[(int)(high % CAPACITY)] <= matchPosition)
        {
            return 0;
        }
        while (low < high)
        {
            final long mid = (low + high) >>> 1;
            if (positions[(int)(mid % CAPACITY)] > matchPosition)
            {
                high = mid;
            }
            else
            {
                low = mid + 1;
            }
        }
        return Math.max(0, nowNs - times[(int)(low % CAPACITY)]);
    }
}
