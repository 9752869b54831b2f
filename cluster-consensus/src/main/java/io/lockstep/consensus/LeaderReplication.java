package io.lockstep.consensus;

import io.lockstep.archive.BlockHandler;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.BooleanType;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The leader's side of replication, in byte positions: each follower's progress, streaming log blocks to it without
 * waiting for acknowledgements (up to {@link ConsensusConfig#maxInFlightBytes()} ahead), heartbeats, finding where a
 * follower's log agrees after a rejection, the commit rule (Raft §5.3, §5.4.2), check-quorum, and handing
 * leadership over. The conductor ({@link ConsensusAgent}) owns the role and term; this class owns the peers.
 * <p>
 * Never does I/O of its own: it reads the log and hands messages to the publisher.
 */
final class LeaderReplication
{
    private static final System.Logger LOGGER = System.getLogger(LeaderReplication.class.getName());

    private final ConsensusConfig config;
    private final int memberId;
    private final RaftLog log;
    private final TermIndex termIndex;
    private final MemberProtocolPublisher publisher;
    private final SnapshotTransfer snapshotTransfer;
    private final PendingAppends pendingAppends;
    private final PeerState[] peers;
    private final long[] quorumScratch;
    private final Membership membership;
    private final UnsafeBuffer emptyBlock = new UnsafeBuffer(new byte[0]);
    /** Held in a field: a method reference at the call site would allocate on every block. */
    private final BlockHandler blockSender = this::sendBlock;

    /** Of the duty cycle being run: set by {@link #replicate} for {@link #sendBlock}. */
    private long term;
    private long commitPosition;
    private long nowNs;
    private final AppendTimes appendTimes = new AppendTimes();
    /** How much log, below what a snapshot covers, a standby may keep the leader from purging. */
    static final long STANDBY_RETENTION_BYTES = 256L * 1024 * 1024;
    private PeerState replicationPeer;
    private boolean replicationSent;

    /** Why a leader hands over: see {@link #handOver}. */
    static final int HANDOVER_CANNOT_WRITE = 0;
    static final int HANDOVER_SLOW_DISK = 1;
    static final int HANDOVER_DAMAGED_FRAME = 2;

    private int transferTarget = -1;
    private boolean timeoutNowSent;
    private final DiskLag diskLag = new DiskLag();
    private long handOverLoggedNs = Long.MIN_VALUE / 2;
    private long transferDeadlineNs;

    LeaderReplication(
        final ConsensusConfig config,
        final RaftLog log,
        final TermIndex termIndex,
        final MemberProtocolPublisher publisher,
        final SnapshotTransfer snapshotTransfer,
        final PendingAppends pendingAppends,
        final Membership membership)
    {
        this.config = config;
        this.memberId = config.memberId();
        this.log = log;
        this.termIndex = termIndex;
        this.publisher = publisher;
        this.snapshotTransfer = snapshotTransfer;
        this.pendingAppends = pendingAppends;
        this.membership = membership;

        final PeerState[] others = new PeerState[config.members().size() - 1];
        int i = 0;
        for (final Member m : config.members())
        {
            if (m.id() != memberId)
            {
                others[i++] = new PeerState(m.id(), m.voting());
            }
        }
        this.peers = others;
        this.quorumScratch = new long[config.members().size()];
        membership.peers(peers);
    }

    /**
     * @return the other members (for elections, which ask the voting ones).
     */
    PeerState[] peers()
    {
        return peers;
    }

    /**
     * Append an entry of this leader's term to its own log (replicated by {@link #replicate}).
     *
     * @return false if the log cannot take it: its batch is full and the disk refuses to write it (see
     * {@link RaftLog#writeProblem()}); the caller answers with back pressure.
     */
    boolean appendEntry(final long term, final int type, final DirectBuffer buffer, final int offset, final int length)
    {
        final long before = log.pendingPosition();
        long result = log.append(term, type, buffer, offset, length);
        if (RaftLog.BACK_PRESSURED == result)
        {
            log.flush();
            result = log.append(term, type, buffer, offset, length);
        }
        if (RaftLog.BACK_PRESSURED == result && null != log.writeProblem())
        {
            return false;
        }
        if (result < 0)
        {
            throw new IllegalStateException("append failed: " + result);
        }
        // The frame (or the padding a segment end put before it) starts where the log ended.
        termIndex.onFrame(term, before);
        return true;
    }

    /**
     * A new term begins with this member as leader: assume, optimistically, that followers hold what this leader
     * held before the term; a rejection corrects it.
     */
    void startTerm(final long termStart, final long nowNs)
    {
        transferTarget = -1;
        diskLag.reset();
        appendTimes.clear();
        for (final PeerState peer : peers)
        {
            peer.reset(termStart, nowNs);
        }
    }

    void onAppendResponse(final AppendResponseDecoder response, final long nowNs)
    {
        final PeerState peer = peer(response.followerId());
        if (null == peer)
        {
            return;
        }
        peer.lastHeardNs = nowNs;
        if (response.success() == BooleanType.TRUE)
        {
            peer.appendedAck = Math.max(peer.appendedAck, response.appendedPosition());
            // Never past what this leader holds: a follower cannot hold more of this term's log than was sent, and
            // a figure above it (a broken or lying member) would make this leader's own disk look slow.
            peer.matchPosition = Math.max(peer.matchPosition,
                Math.min(response.durablePosition(), log.appendedPosition()));
            return;
        }
        if (isRelayed(peer))
        {
            // Its rejections answer the relay's forwarded appends, numbered by the relay's sequence: caught up
            // directly from here on (see followsRelay).
            peer.direct = true;
        }
        else if (response.sequence() < peer.resetSequence)
        {
            return;
        }
        final long agreed = agreedPosition(response);
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} replicates to {1} again from {2}", memberId, peer.id, agreed);
        peer.nextPosition = agreed;
        peer.appendedAck = agreed;
        peer.resetSequence = peer.sequence;
    }

    void onInstallSnapshotResponse(
        final int followerId, final long position, final long nextOffset, final boolean installed, final long nowNs)
    {
        final PeerState peer = peer(followerId);
        if (null != peer)
        {
            peer.lastHeardNs = nowNs;
            snapshotTransfer.onResponse(peer, position, nextOffset, installed);
        }
    }

    /**
     * The last position both logs agree on: the end of the highest term both hold (term starts are shared facts,
     * see {@link TermIndex}), and never below the follower's commit position, which every log holds alike.
     */
    private long agreedPosition(final AppendResponseDecoder response)
    {
        final long followerEnd = response.appendedPosition();
        // May lie below this leader's log start: then the follower is sent the snapshot instead.
        long agreed = Math.min(response.commitPosition(), followerEnd);
        final AppendResponseDecoder.TermStartsDecoder starts = response.termStarts();
        final int count = starts.count();
        long previousTerm = -1;
        long previousStart = -1;
        for (int i = 0; i <= count; i++)
        {
            long followerTermEnd = followerEnd;
            if (i < count)
            {
                starts.next();
                followerTermEnd = starts.startPosition();
            }
            if (previousTerm >= 0 && termIndex.startOf(previousTerm) == previousStart)
            {
                final long leaderTermEnd = termIndex.endOf(previousTerm, log.pendingPosition());
                agreed = Math.max(agreed, Math.min(followerTermEnd, leaderTermEnd));
            }
            if (i < count)
            {
                previousTerm = starts.term();
                previousStart = starts.startPosition();
            }
        }
        return Math.min(agreed, log.pendingPosition());
    }

    /**
     * Send each follower what it lacks, as far as the in-flight bound allows, or the snapshot if its next entry is
     * purged; a heartbeat (an empty append) to any follower sent nothing for a heartbeat interval.
     *
     * @return work done.
     */
    int replicate(final long term, final long commitPosition, final long nowNs)
    {
        this.term = term;
        this.commitPosition = commitPosition;
        this.nowNs = nowNs;
        int work = 0;
        final long end = log.appendedPosition();
        appendTimes.onAppended(end, nowNs);
        for (final PeerState peer : peers)
        {
            if ((!peer.voting && !peer.learner) || followsRelay(peer, nowNs))
            {
                continue;
            }
            if (peer.nextPosition < log.startPosition() || peer.installPosition >= 0)
            {
                work += snapshotTransfer.send(peer, term, nowNs, config.heartbeatIntervalNs());
                continue;
            }
            while (peer.nextPosition < end &&
                peer.nextPosition - Math.max(peer.appendedAck, 0) < config.maxInFlightBytes())
            {
                replicationPeer = peer;
                replicationSent = false;
                final int bytes = log.readBlock(peer.nextPosition, end, config.maxBlockBytes(), blockSender);
                if (0 == bytes || !replicationSent)
                {
                    break;
                }
                work++;
            }
            if (nowNs - peer.lastSentNs >= config.heartbeatIntervalNs())
            {
                if (publisher.appendRequest(peer.id, term, memberId, peer.sequence, peer.nextPosition,
                    termIndex.termAt(peer.nextPosition), commitPosition, emptyBlock, 0, 0))
                {
                    peer.sequence++;
                    peer.lastSentNs = nowNs;
                    work++;
                }
            }
        }
        return work;
    }

    /**
     * A standby fed by the relay ({@link ConsensusConfig#relay}) is sent nothing directly while it follows the
     * forwarded stream: heard from recently, and as far along as the relay less one in-flight window. One that fell
     * behind, or whose relay is silent, is replicated to directly, from what it last acknowledged.
     */
    private boolean followsRelay(final PeerState peer, final long nowNs)
    {
        if (!isRelayed(peer))
        {
            return false;
        }
        final PeerState relay = peer(config.relay());
        final boolean follows = null != relay && relay.learner && !peer.direct && peer.appendedAck >= 0 &&
            nowNs - relay.lastHeardNs < config.electionTimeoutNs() &&
            nowNs - peer.lastHeardNs < config.electionTimeoutNs() &&
            peer.appendedAck + config.maxInFlightBytes() >= relay.appendedAck;
        if (!follows)
        {
            peer.nextPosition = Math.max(peer.nextPosition, peer.appendedAck);
            peer.direct = null != relay && peer.appendedAck < relay.appendedAck;
        }
        return follows;
    }

    private boolean isRelayed(final PeerState peer)
    {
        return config.relay() >= 0 && peer.learner && peer.id != config.relay();
    }

    private void sendBlock(
        final DirectBuffer buffer, final int offset, final int length, final long startPosition, final long endPosition)
    {
        final PeerState peer = replicationPeer;
        if (publisher.appendRequest(peer.id, term, memberId, peer.sequence, startPosition,
            termIndex.termAt(startPosition), commitPosition, buffer, offset, length))
        {
            peer.sequence++;
            peer.nextPosition = endPosition;
            peer.lastSentNs = nowNs;
            replicationSent = true;
        }
    }

    /**
     * The commit rule: the position a majority of voting members holds durably (this leader's own durable position
     * included), if the entry ending there is of this leader's term (Raft §5.4.2: older entries are committed only
     * by committing one of the current term after them). Driver appends committed by it are acknowledged.
     *
     * @return the new commit position (never lower than the one given).
     */
    long commitPosition(final long term, final long commitPosition)
    {
        int n = 0;
        if (membership.isVoter(memberId))
        {
            // A leader whose removal is in the log manages the cluster until it commits, not counting itself.
            quorumScratch[n++] = log.durablePosition();
        }
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                quorumScratch[n++] = peer.matchPosition;
            }
        }
        long candidate = kthHighest(n, membership.quorum());
        if (config.syncStandby() && membership.learnerQuorum() > 0)
        {
            // Committing later is always safe; here it buys that an acknowledged entry is on a majority of the
            // standbys too, so that whichever majority of them a promotion elects from holds it (with no standby
            // left, after a promotion, there is nothing to wait for).
            int k = 0;
            for (final PeerState peer : peers)
            {
                if (peer.learner)
                {
                    quorumScratch[k++] = peer.matchPosition;
                }
            }
            candidate = Math.min(candidate, kthHighest(k, membership.learnerQuorum()));
        }
        if (candidate > commitPosition && termIndex.termAt(candidate) == term)
        {
            pendingAppends.ackCommitted(publisher, candidate, memberId);
            return candidate;
        }
        return commitPosition;
    }

    /** @return the k-th highest of the first n scratch values (insertion sort: a handful, no allocation). */
    private long kthHighest(final int n, final int k)
    {
        for (int i = 1; i < n; i++)
        {
            final long v = quorumScratch[i];
            int j = i - 1;
            while (j >= 0 && quorumScratch[j] < v)
            {
                quorumScratch[j + 1] = quorumScratch[j];
                j--;
            }
            quorumScratch[j + 1] = v;
        }
        return k <= n ? quorumScratch[k - 1] : -1;
    }

    /**
     * @param voting true for the voting followers, false for the standbys (non-voting members).
     * @return how long ago this leader first held a byte the furthest-behind of them has not acknowledged as
     * durable, in nanoseconds (0 when every one has it all).
     */
    long maxLagNs(final boolean voting)
    {
        long lag = 0;
        for (final PeerState peer : peers)
        {
            if (voting ? peer.voting : peer.learner)
            {
                lag = Math.max(lag, lagNs(peer));
            }
        }
        return lag;
    }

    /**
     * @return bytes of this leader's log the furthest-behind standby (non-voting member) lacks; 0 with none.
     */
    long maxStandbyLagBytes()
    {
        long lag = 0;
        for (final PeerState peer : peers)
        {
            if (peer.learner)
            {
                lag = Math.max(lag, lagBytes(peer));
            }
        }
        return lag;
    }

    /** @return bytes of this leader's log the member has not acknowledged as durable. */
    long lagBytes(final PeerState peer)
    {
        return log.appendedPosition() - Math.max(0, peer.matchPosition);
    }

    /** @return how long ago this leader first held a byte the member has not acknowledged as durable, ns. */
    long lagNs(final PeerState peer)
    {
        return appendTimes.lagNs(Math.max(0, peer.matchPosition), log.appendedPosition(), nowNs);
    }

    /**
     * @return bytes of this leader's log that the furthest-behind voting follower has not acknowledged as durable.
     */
    long maxLag()
    {
        final long end = log.appendedPosition();
        long lag = 0;
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                lag = Math.max(lag, end - Math.max(0, peer.matchPosition));
            }
        }
        return lag;
    }

    /**
     * Check-quorum: a leader that has not heard from a majority of voting members within the election timeout must
     * step down, so that a leader cut off from the cluster stops accepting work it cannot commit.
     *
     * @return true if a majority (this member included) was heard from recently enough.
     */
    boolean hasQuorum(final long nowNs)
    {
        int heard = 1;
        for (final PeerState peer : peers)
        {
            if (peer.voting && nowNs - peer.lastHeardNs < config.electionTimeoutNs())
            {
                heard++;
            }
        }
        return heard >= membership.quorum();
    }

    /**
     * The lowest position a follower heard from within two election timeouts still needs: log below it may be
     * purged. A follower silent for longer gets the snapshot when it returns.
     */
    long retainedFor(final long bound, final long nowNs)
    {
        long retained = bound;
        for (final PeerState peer : peers)
        {
            final long needs = Math.max(peer.matchPosition, peer.appendedAck);
            // A standby may hold the log back by at most STANDBY_RETENTION_BYTES: further behind, it is sent the
            // snapshot instead, so a slow or distant standby cannot grow the leader's disk without bound.
            if ((peer.voting || peer.learner) && nowNs - peer.lastHeardNs < 2 * config.electionTimeoutNs() &&
                (peer.voting || bound - needs <= STANDBY_RETENTION_BYTES))
            {
                retained = Math.min(retained, needs);
            }
        }
        return retained;
    }

    /**
     * Hand leadership to a voting member once it holds this leader's whole log (it is then sent TimeoutNow), or
     * give up after an election timeout.
     *
     * @return false if the target is not a voting member.
     */
    boolean startTransfer(final int target, final long nowNs)
    {
        final PeerState peer = peer(target);
        if (null == peer || !peer.voting)
        {
            return false;
        }
        transferTarget = target;
        timeoutNowSent = false;
        transferDeadlineNs = nowNs + config.electionTimeoutNs();
        return true;
    }

    /**
     * @return true while a transfer is under way (the leader takes no new work meanwhile).
     */
    boolean transferring()
    {
        return transferTarget >= 0;
    }

    void progressTransfer(final long term, final long nowNs)
    {
        if (transferTarget < 0)
        {
            final PeerState best = bestLivePeer(nowNs);
            final long lagNs = diskLag.lagNs(log.durablePosition(), null == best ? -1 : best.matchPosition, nowNs);
            if (null != log.writeProblem())
            {
                handOver(nowNs, HANDOVER_CANNOT_WRITE);
            }
            else if (lagNs > config.electionTimeoutNs())
            {
                handOver(nowNs, HANDOVER_SLOW_DISK);
            }
        }
        if (transferTarget < 0)
        {
            return;
        }
        final PeerState target = peer(transferTarget);
        if (nowNs > transferDeadlineNs)
        {
            LOGGER.log(System.Logger.Level.WARNING, "leadership transfer to {0} timed out", transferTarget);
            transferTarget = -1;
        }
        else if (!timeoutNowSent && target.matchPosition >= log.appendedPosition() &&
            publisher.timeoutNow(target.id, term, memberId))
        {
            // Still no new work until the target's term deposes this leader (or the deadline passes): an entry
            // taken now would reach the other followers but not the target, whose votes it would then lose.
            timeoutNowSent = true;
            transferDeadlineNs = nowNs + config.electionTimeoutNs();
        }
    }

    /**
     * A leader that cannot write its log commits nothing new (its own durable position is stuck), one whose disk is
     * slow holds up whatever waits for its own copy, and one that found a damaged frame cannot send it, so it hands
     * leadership to the voting follower that holds the most of its log durably.
     *
     * @param why one of the {@code HANDOVER_} reasons (a code: the warning's text is made only when it is said).
     */
    void handOver(final long nowNs, final int why)
    {
        final PeerState best = bestLivePeer(nowNs);
        if (null != best && startTransfer(best.id, nowNs) && nowNs - handOverLoggedNs > config.electionTimeoutNs())
        {
            handOverLoggedNs = nowNs; // said once per election timeout, though it asks again every time it can
            LOGGER.log(System.Logger.Level.WARNING, "member {0} hands leadership to member {1}: {2}", memberId,
                best.id, switch (why)
                {
                    case HANDOVER_CANNOT_WRITE -> "it cannot write its log (" + log.writeProblem() + ")";
                    case HANDOVER_SLOW_DISK -> "its disk is slow: its log is durable only up to " +
                        log.durablePosition() + ", behind what a follower holds durably, for over an election timeout";
                    default -> "a frame of its log is damaged (" + log.damage() + ")";
                });
        }
    }

    /**
     * @return true if a live voting follower already holds a position, past which this leader can still send it the
     * rest (a transfer to it can finish: the leader takes no new entries meanwhile).
     */
    boolean mayHandOver(final long nowNs, final long position)
    {
        final PeerState best = bestLivePeer(nowNs);
        return null != best && best.matchPosition > position;
    }

    /** @return the live voting follower that holds the most of this leader's log durably, or null if none is live. */
    private PeerState bestLivePeer(final long nowNs)
    {
        PeerState best = null;
        for (final PeerState peer : peers)
        {
            // Only a peer heard from lately: a transfer to a dead one would time out, and be tried again, forever.
            final boolean alive = nowNs - peer.lastHeardNs < config.electionTimeoutNs();
            if (peer.voting && alive && (null == best || peer.matchPosition > best.matchPosition))
            {
                best = peer;
            }
        }
        return best;
    }

    /**
     * This member leads no more (or never did): no transfer is under way, and frames its log holds but could not
     * write (a full disk) are dropped. They were never durable, so never acknowledged, and the next leader sends
     * what it has in their place.
     */
    void onFollowing()
    {
        transferTarget = -1;
        diskLag.reset();
        if (null != log.writeProblem())
        {
            final long from = log.discardUnwritten();
            if (from >= 0)
            {
                termIndex.truncate(from);
                membership.onTruncate(from);
            }
        }
    }

    /**
     * @return true if a connection to any other member is up.
     */
    boolean anyPeerConnected(final Transport transport)
    {
        for (final PeerState peer : peers)
        {
            if (transport.isConnected(peer.id))
            {
                return true;
            }
        }
        return false;
    }

    PeerState peer(final int id)
    {
        for (final PeerState peer : peers)
        {
            if (peer.id == id)
            {
                return peer;
            }
        }
        return null;
    }
}
