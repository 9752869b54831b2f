package io.lockstep.consensus;

import java.util.function.LongSupplier;

/**
 * What a follower owes its leader: the acknowledgement of the last append it took (sent once the bytes are durable
 * under the member's policy, as far as they matched), or a rejection that lets the leader find where the logs agree.
 * Also the follower's commit rule: what the leader says is committed, as far as this log holds it durably.
 */
final class FollowerAcks
{
    private final int memberId;
    private final RaftLog log;
    private final TermIndex termIndex;
    private final MemberProtocolPublisher publisher;

    private boolean pending;
    private long sequence;
    /** Where this log matched the leader's at the last append taken; -1 when nothing is owed to this leader. */
    private long matchedPosition = -1;
    private long leaderCommitSeen;
    /** The durable position the last acknowledgement carried: a higher one is owed when the disk catches up. */
    private long ackedDurable = -1;
    private final CommitRate commitRate = new CommitRate();
    private final LongSupplier clock;

    FollowerAcks(
        final int memberId, final RaftLog log, final TermIndex termIndex, final MemberProtocolPublisher publisher,
        final LongSupplier clock)
    {
        this.memberId = memberId;
        this.log = log;
        this.termIndex = termIndex;
        this.publisher = publisher;
        this.clock = clock;
    }

    /** The log now matches the leader's up to {@code position}: acknowledge request {@code sequence} when durable. */
    void onAccepted(final long position, final long leaderCommit, final long requestSequence)
    {
        matchedPosition = position;
        leaderCommitSeen = Math.max(leaderCommitSeen, leaderCommit);
        commitRate.onCommitSeen(clock.getAsLong(), leaderCommit);
        pending = true;
        sequence = requestSequence;
    }

    /** A conflicting suffix was cut at {@code position}: nothing past it may be acknowledged. */
    void onTruncated(final long position)
    {
        matchedPosition = Math.min(matchedPosition, position);
        ackedDurable = Math.min(ackedDurable, position);
    }

    /** A snapshot up to {@code position} was installed: the log matches there, and nothing else is owed. */
    void onSnapshotInstalled(final long position)
    {
        matchedPosition = position;
        ackedDurable = position;
        pending = false;
    }

    /** Another leader, or none: an acknowledgement owed to the previous one is owed to no one now. */
    void forget()
    {
        matchedPosition = -1;
        ackedDurable = -1;
        pending = false;
    }

    /**
     * @return true if an acknowledgement is owed: for an append taken, or because the disk made more of what was
     * taken durable since the last one (the log syncs on a thread of its own, so that comes later).
     */
    boolean pending()
    {
        return pending || (matchedPosition >= 0 && Math.min(log.durablePosition(), matchedPosition) > ackedDurable);
    }

    /** @return how fast the leader's commit position recently moved, in bytes a second (see {@link CommitRate}). */
    long leaderCommitRate()
    {
        return commitRate.peakBytesPerSecond();
    }

    /** @return the highest commit position a leader has told this member of. */
    long leaderCommitSeen()
    {
        return leaderCommitSeen;
    }

    /**
     * Acknowledge what is durable and matched, advancing the commit position to what the leader said is committed
     * as far as this log holds it durably.
     *
     * @return the commit position after the acknowledgement (never lower than the one given).
     */
    long sendAck(final int leaderId, final long term, final long commitPosition)
    {
        if (leaderId < 0)
        {
            // Owed to a leader this member no longer follows (it stood for election while the link was down): the
            // next leader asks again.
            pending = false;
            matchedPosition = -1;
            return commitPosition;
        }
        final long durable = Math.min(log.durablePosition(), matchedPosition);
        final long appended = Math.min(log.appendedPosition(), matchedPosition);
        final long commit = Math.max(commitPosition, Math.min(leaderCommitSeen, durable));
        if (publisher.appendResponse(leaderId, term, memberId, sequence, true, appended, durable, commit, termIndex))
        {
            pending = false;
            ackedDurable = durable;
        }
        return commit;
    }

    /**
     * Refuse an append whose previous entry this log does not hold. The commit position is a shared fact the leader
     * starts from, but not for a leader of a newer membership epoch: its history may part from this member's below
     * it (an asynchronous standby zone's promotion). Then only term starts are shared, and the leader finds the
     * parting point from them (and this member stops, see {@link FollowerLog#DIVERGED}).
     */
    void reject(final int leaderId, final long term, final long requestSequence, final long leaderTerm,
        final long commitPosition)
    {
        pending = false;
        final boolean newerEpoch = Membership.isNewerEpoch(leaderTerm, termIndex.termAt(commitPosition));
        publisher.appendResponse(leaderId, term, memberId, requestSequence, false, log.pendingPosition(),
            log.durablePosition(), newerEpoch ? 0 : commitPosition, termIndex);
    }
}
