package io.lockstep.consensus;

/**
 * What a leader knows about one other member. Positions are log positions; -1 means not known.
 */
final class PeerState
{
    final int id;
    /** Counts toward elections and the commit (set from {@link Membership} as epochs change). */
    boolean voting;
    /** A standby: sent the log, counted by nothing but the synchronous standby option. */
    boolean learner;
    /** This member's membership epoch was sent on the connection that is up (see MembershipExchange#announce). */
    boolean epochAnnounced;
    /** A standby that fell behind the relay's forwarded stream: sent the log directly until it has caught up. */
    boolean direct;
    /** Where the next append request starts (requests are pipelined: this runs ahead of acknowledgements). */
    long nextPosition;
    /** Highest position the follower said it appended and matched. */
    long appendedAck = -1;
    /** Highest position the follower said is durable and matched: what counts toward commit. */
    long matchPosition = -1;
    long lastHeardNs;
    long lastSentNs;
    /** Sequence of the next request; responses echo it. */
    long sequence;
    /** Rejections of requests before this sequence are stale: the leader already started over from them. */
    long resetSequence;

    /** Position of the snapshot being streamed to this follower, or -1 when it is sent log. */
    long installPosition = -1;
    long installTerm;
    long installLength;
    /** Next snapshot offset to send. */
    long installOffset;
    /** Snapshot bytes the follower has acknowledged. */
    long installAcked;

    PeerState(final int id, final boolean voting)
    {
        this.id = id;
        this.voting = voting;
        this.learner = !voting;
    }

    void reset(final long position, final long nowNs)
    {
        nextPosition = position;
        appendedAck = -1;
        matchPosition = -1;
        lastHeardNs = nowNs;
        lastSentNs = 0;
        resetSequence = sequence;
        installPosition = -1;
    }
}
