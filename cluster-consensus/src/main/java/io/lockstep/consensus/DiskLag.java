package io.lockstep.consensus;

/**
 * How long a leader's own disk has lagged its followers': the time since a follower first acknowledged as durable a
 * position this leader still has not made durable. The log syncs on a thread of its own, so a slow disk on the
 * leader does not hold up commits (a majority of followers can commit without it) but it does hold up everything
 * that waits for the leader's own copy, and it is the first sign of a failing device. Past a bound the leader hands
 * over to a healthy follower ({@link LeaderReplication#progressTransfer}).
 * <p>
 * A healthy disk lags a follower's only for a moment (the leader writes first, so its sync starts first); the bound
 * is an election timeout, the same horizon at which a silent leader is taken for dead.
 */
final class DiskLag
{
    private long behindSinceNs = -1;
    private long target;

    /**
     * @param ownDurable       the leader's durable position.
     * @param followerDurable  the highest durable position a live voting follower has acknowledged.
     * @param nowNs            this duty cycle's time.
     * @return nanoseconds the leader has lagged, or 0 if it does not.
     */
    long lagNs(final long ownDurable, final long followerDurable, final long nowNs)
    {
        if (behindSinceNs >= 0 && ownDurable >= target)
        {
            behindSinceNs = -1;
        }
        if (behindSinceNs < 0 && followerDurable > ownDurable)
        {
            behindSinceNs = nowNs;
            target = followerDurable;
        }
        return behindSinceNs < 0 ? 0 : nowNs - behindSinceNs;
    }

    /** A new term, or no longer leading: lag is measured afresh. */
    void reset()
    {
        behindSinceNs = -1;
    }
}
