package io.lockstep.consensus;

/**
 * How fast the leader's commit position has recently moved, as a follower or standby sees it: the highest rate over
 * the last {@link #WINDOWS} one-second windows. A promotion uses it to bound what the lost primary may have committed
 * after the standbys last heard from it ({@code tool promote}). Time is the member's own monotonic clock, handed in.
 */
final class CommitRate
{
    static final int WINDOWS = 10;
    private static final long WINDOW_NS = 1_000_000_000L;
    /** A partial window counts once it is this long: shorter ones make a burst look like a rate. */
    private static final long MIN_PARTIAL_NS = 100_000_000L;

    private final long[] bytesPerSecond = new long[WINDOWS];
    private int next;
    private long windowStartNs = Long.MIN_VALUE;
    private long windowStartCommit;
    private long lastNs;
    private long lastCommit;

    /**
     * @param nowNs  monotonic time of the append that told it.
     * @param commit the commit position a leader sent.
     */
    void onCommitSeen(final long nowNs, final long commit)
    {
        if (Long.MIN_VALUE == windowStartNs || commit < windowStartCommit)
        {
            // The first sample, or a commit position from a leader of another configuration: start again.
            windowStartNs = nowNs;
            windowStartCommit = commit;
        }
        else if (nowNs - windowStartNs >= WINDOW_NS)
        {
            bytesPerSecond[next] = rate(commit - windowStartCommit, nowNs - windowStartNs);
            next = (next + 1) % WINDOWS;
            windowStartNs = nowNs;
            windowStartCommit = commit;
        }
        lastNs = nowNs;
        lastCommit = Math.max(lastCommit, commit);
    }

    /** @return the highest commit rate, in bytes a second, over the recent windows (0 if none was seen). */
    long peakBytesPerSecond()
    {
        long peak = 0;
        for (final long rate : bytesPerSecond)
        {
            peak = Math.max(peak, rate);
        }
        if (Long.MIN_VALUE != windowStartNs && lastNs - windowStartNs >= MIN_PARTIAL_NS)
        {
            peak = Math.max(peak, rate(lastCommit - windowStartCommit, lastNs - windowStartNs));
        }
        return peak;
    }

    private static long rate(final long bytes, final long ns)
    {
        return ns <= 0 ? 0 : (long)(bytes * (1e9 / ns));
    }
}
