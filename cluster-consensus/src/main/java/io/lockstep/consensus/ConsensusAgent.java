package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.cluster.transport.Member;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.Role;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Random;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * One member's Raft, as an Agrona agent: follower, candidate and leader roles with pre-vote, check-quorum, streamed
 * and pipelined replication, the majority commit rule, catch-up, leadership transfer and non-voting members.
 * <p>
 * Deterministic: the clock, transport, log, election state and randomness are handed in, and {@link #doWork()} reads
 * the clock once per duty cycle. It starts no thread and never sleeps, so a whole cluster can run in one thread
 * from a seed.
 * <p>
 * A duty cycle: take every message that has arrived (appending replicated bytes to the log's batch), write the
 * batch with one flush (group commit), then act on the role: a leader replicates, advances the commit position and
 * checks its quorum; a follower acknowledges what is now durable, or stands for election when its leader is silent.
 */
public final class ConsensusAgent implements Agent
{
    private static final System.Logger LOGGER = System.getLogger(ConsensusAgent.class.getName());
    private static final int NEW_TERM_PAYLOAD_LENGTH = 64;

    private final ConsensusConfig config;
    private final int memberId;
    private final NanoClock clock;
    private final LogClock logClock;
    private final Transport transport;
    private final RaftLog log;
    private final ElectionStateStore electionState;
    private final Random random;
    private final MemberProtocolPublisher publisher;
    private final MemberProtocolAdapter adapter;
    private final TermIndex termIndex = new TermIndex();
    private final PeerState[] peers;
    private final long[] quorumScratch;
    private final int quorum;
    private final boolean voting;
    private final UnsafeBuffer entryScratch = new UnsafeBuffer(new byte[NEW_TERM_PAYLOAD_LENGTH]);
    private final PendingAppends pendingAppends;
    private final io.lockstep.consensus.log.NewLeadershipTermEncoder newTermEntry =
        new io.lockstep.consensus.log.NewLeadershipTermEncoder();
    private final io.lockstep.consensus.log.MessageHeaderEncoder entryHeader =
        new io.lockstep.consensus.log.MessageHeaderEncoder();

    private Role role = Role.FOLLOWER;
    private long term;
    private int votedFor;
    private int leaderId = -1;
    private long commitPosition;
    private long nowNs;
    private long electionDeadlineNs;
    private long lastHeardFromLeaderNs = Long.MIN_VALUE / 2;
    private boolean preVotePhase;
    private long votes;
    private boolean started;

    private boolean ackPending;
    private long ackSequence;
    private long matchedPosition = -1;
    private long leaderCommitSeen;

    /** Set by each message from the leader; cleared when its connection drops (handled once per drop). */
    private boolean leaderConnectionUp;
    private int transferTarget = -1;
    private ClientIngress clientIngress;
    private ServiceHooks serviceHooks;
    private SnapshotStorage snapshots;
    private final SnapshotTransfer snapshotTransfer;
    private long transferDeadlineNs;

    /**
     * @param config        who this member is and who the others are.
     * @param clock         monotonic time, for timeouts: the only source of time besides the wall clock.
     * @param wallClock     nanoseconds since the Unix epoch, for log time ({@link LogClock}): read once per duty
     *                      cycle, and only by the leader.
     * @param transport     to other members and clients.
     * @param log           the member's log.
     * @param electionState the member's durable term and vote.
     * @param random        seeded randomness for election timeouts.
     */
    public ConsensusAgent(
        final ConsensusConfig config,
        final NanoClock clock,
        final EpochNanoClock wallClock,
        final Transport transport,
        final RaftLog log,
        final ElectionStateStore electionState,
        final Random random)
    {
        this.config = config;
        this.memberId = config.memberId();
        this.clock = clock;
        this.logClock = new LogClock(wallClock);
        this.transport = transport;
        this.log = log;
        this.electionState = electionState;
        this.random = random;
        this.publisher = new MemberProtocolPublisher(transport, config.maxBlockBytes());
        this.adapter = new MemberProtocolAdapter(this);
        this.pendingAppends = new PendingAppends(config.maxPendingClientAppends());
        this.snapshotTransfer = new SnapshotTransfer(publisher, memberId, Math.min(64 * 1024, config.maxBlockBytes()));

        int votingCount = 0;
        final PeerState[] others = new PeerState[config.members().size() - 1];
        int i = 0;
        for (final Member m : config.members())
        {
            votingCount += m.voting() ? 1 : 0;
            if (m.id() != memberId)
            {
                others[i++] = new PeerState(m.id(), m.voting());
            }
        }
        this.peers = others;
        this.quorum = votingCount / 2 + 1;
        this.quorumScratch = new long[votingCount];
        this.voting = config.member(memberId).voting();
        this.term = electionState.term();
        this.votedFor = electionState.votedFor();
        rebuildTermIndex();
        if (termIndex.lastTerm() > term)
        {
            throw new IllegalStateException("log holds term " + termIndex.lastTerm() + " beyond the stored term " + term);
        }
        if (LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0} lost frames it may have acknowledged: log ends at " +
                "{1}, promised {2}; it votes as if it held them and stands for election only once a leader has " +
                "sent them again", memberId, log.pendingPosition(), log.promisedPosition());
        }
    }

    public String roleName()
    {
        return "consensus-" + memberId;
    }

    private void rebuildTermIndex()
    {
        termIndex.clear();
        if (log.startPosition() > 0)
        {
            // The frame that ended at the log's start is purged; its term is kept with the log. Noted just before
            // the start, so that "the term at the start" is that term and the first stored frame still starts a term.
            termIndex.onFrame(log.startTerm(), log.startPosition() - 1);
        }
        log.scan((position, frameTerm, frameType, buffer, frameOffset) ->
        {
            termIndex.onFrame(frameTerm, position);
            logClock.observeFrame(buffer, frameOffset, frameType);
        });
    }

    /**
     * Attach the service layer: its snapshots (to compact the log and to stream to followers that need purged log)
     * and its hooks.
     */
    public void attachService(final SnapshotStorage snapshots, final ServiceHooks hooks)
    {
        this.snapshots = snapshots;
        this.serviceHooks = hooks;
        snapshotTransfer.storage(snapshots);
    }

    /**
     * Start from a loaded snapshot: it covers committed state up to its position, so that much is committed. If the
     * log ends below it, or holds another entry ending there, the log is reset to start at the snapshot (the leader
     * sends the rest): nothing in it is lost that was committed, because a committed entry at or before the snapshot
     * is in it, and by log matching no entry after a mismatch can be committed. A log that starts above the
     * snapshot is another matter (the newest snapshot was damaged and an older one is all there is): it may hold
     * entries this member acknowledged, so the member refuses to start rather than discard them.
     */
    public void startFromSnapshot(final long position, final long snapshotTerm)
    {
        if (log.startPosition() > position)
        {
            // The log may hold entries this member acknowledged: discarding it could lose a committed entry.
            throw new IllegalStateException("member " + memberId + ": the log starts at " + log.startPosition() +
                ", above the newest usable snapshot at " + position + ", so the state between cannot be rebuilt " +
                "here; the log is kept, not discarded, because it may hold acknowledged entries. Restore a snapshot " +
                "at or above " + log.startPosition() + ", or move this member's data directory away so that it " +
                "rejoins empty and is sent the leader's snapshot");
        }
        final boolean joins = log.startPosition() <= position && position <= log.pendingPosition() &&
            termIndex.termAt(position) == snapshotTerm && isFrameBoundary(position);
        if (!joins)
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: log [{1}, {2}) does not join the snapshot at {3} " +
                "(term {4}); the log restarts at the snapshot", memberId, log.startPosition(), log.pendingPosition(),
                position, snapshotTerm);
            log.flush();
            log.reset(position, snapshotTerm);
            rebuildTermIndex();
        }
        commitPosition = Math.max(commitPosition, position);
    }

    private boolean isFrameBoundary(final long position)
    {
        if (position == log.startPosition() || position == log.pendingPosition())
        {
            return true;
        }
        final boolean[] found = new boolean[1];
        log.scan((p, frameTerm, frameType, buffer, frameOffset) -> found[0] |= p == position);
        return found[0];
    }

    /**
     * Drop log below a position a durable snapshot covers, but never what a follower still catching up from this
     * leader's log needs: a follower heard from recently keeps its position; one silent for longer gets the
     * snapshot instead when it returns.
     *
     * @return the log's start after purging.
     */
    public long compactLog(final long snapshotPosition)
    {
        long bound = Math.min(snapshotPosition, commitPosition);
        if (Role.LEADER == role)
        {
            for (final PeerState peer : peers)
            {
                if (nowNs - peer.lastHeardNs < 2 * config.electionTimeoutNs())
                {
                    bound = Math.min(bound, Math.max(peer.matchPosition, peer.appendedAck));
                }
            }
        }
        if (bound <= log.startPosition())
        {
            return log.startPosition();
        }
        log.flush();
        return log.purge(bound, termIndex::termAt);
    }

    /**
     * Answer a tool's request (sent as a ClientAppendAck).
     */
    public void answerTool(final int endpoint, final long correlationId, final boolean ok, final long position)
    {
        publisher.clientAppendAck(endpoint, correlationId, ok ? AppendStatus.OK :
            Role.LEADER != role ? AppendStatus.NOT_LEADER : AppendStatus.REJECTED, position, leaderId);
    }

    public long logStartPosition()
    {
        return log.startPosition();
    }

    public int doWork()
    {
        nowNs = clock.nanoTime();
        if (!started)
        {
            started = true;
            electionDeadlineNs = nowNs + randomElectionTimeout();
        }

        if (Role.LEADER == role)
        {
            // Before the poll: client messages are appended, and stamped, as they arrive.
            logClock.tick(nowNs);
        }
        int work = transport.poll(nowNs, adapter);
        if (log.pendingPosition() > log.appendedPosition())
        {
            log.flush();
            work++;
        }

        if (Role.LEADER == role)
        {
            work += replicate();
            updateCommitPosition();
            checkQuorum();
            progressTransfer();
        }
        else
        {
            if (ackPending)
            {
                work += sendAck();
            }
            if (leaderConnectionUp && leaderId >= 0 && !transport.isConnected(leaderId))
            {
                onLeaderConnectionLost();
            }
            if (voting && nowNs >= electionDeadlineNs)
            {
                work += standForElection();
            }
        }
        work += transport.flush(nowNs);
        return work;
    }

    public void onClose()
    {
        log.close();
        transport.close();
    }

    public Role role()
    {
        return role;
    }

    public long term()
    {
        return term;
    }

    public int leaderId()
    {
        return leaderId;
    }

    public int memberId()
    {
        return memberId;
    }

    public long commitPosition()
    {
        return commitPosition;
    }

    public long logPosition()
    {
        return log.appendedPosition();
    }

    // ----------------------------------------------------------------------------------------------- elections

    private int standForElection()
    {
        if (LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            // Lost frames this member may have helped commit: as leader it could overwrite them. It waits for a
            // leader to send them again (it still votes, as if it held them).
            electionDeadlineNs = nowNs + randomElectionTimeout();
            LOGGER.log(System.Logger.Level.WARNING, "member {0} does not stand for election: its log ends at {1} " +
                "(term {2}) but it promised up to {3} (term {4}) before frames were lost", memberId,
                log.pendingPosition(), termIndex.lastTerm(), log.promisedPosition(), log.promisedTerm());
            return 0;
        }
        startPreVote();
        return 1;
    }

    private void startPreVote()
    {
        role = Role.CANDIDATE;
        leaderId = -1;
        preVotePhase = true;
        votes = 1L << memberId;
        electionDeadlineNs = nowNs + randomElectionTimeout();
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} pre-vote for term {1}", memberId, term + 1);
        if (Long.bitCount(votes) >= quorum)
        {
            startElection(false);
            return;
        }
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                publisher.requestVote(peer.id, term + 1, memberId, termIndex.lastTerm(), log.pendingPosition(), true,
                    false);
            }
        }
    }

    private void startElection(final boolean transfer)
    {
        role = Role.CANDIDATE;
        leaderId = -1;
        preVotePhase = false;
        setTermAndVote(term + 1, memberId);
        votes = 1L << memberId;
        electionDeadlineNs = nowNs + randomElectionTimeout();
        LOGGER.log(System.Logger.Level.INFO, "member {0} stands for election in term {1}", memberId, term);
        if (Long.bitCount(votes) >= quorum)
        {
            becomeLeader();
            return;
        }
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                publisher.requestVote(peer.id, term, memberId, termIndex.lastTerm(), log.pendingPosition(), false,
                    transfer);
            }
        }
    }

    void onRequestVote(
        final long candidateTerm,
        final int candidateId,
        final long lastLogTerm,
        final long lastLogPosition,
        final boolean preVote,
        final boolean transfer)
    {
        if (!voting || null == config.member(candidateId) || !config.member(candidateId).voting())
        {
            return;
        }
        // A member that hears a live leader (or is one) ignores candidates: a partitioned member rejoining with
        // a high term cannot depose a healthy leader. A leadership transfer is the one exception.
        final boolean leaderAlive = Role.LEADER == role || nowNs - lastHeardFromLeaderNs < config.electionTimeoutNs();
        final boolean owes = LogOrder.owesPromisedFrames(log, termIndex.lastTerm());
        final boolean upToDate = LogOrder.atLeastAsUpToDate(lastLogTerm, lastLogPosition,
            owes ? log.promisedTerm() : termIndex.lastTerm(), owes ? log.promisedPosition() : log.pendingPosition());
        if (preVote)
        {
            final boolean granted = candidateTerm > term && upToDate && (!leaderAlive || transfer);
            publisher.vote(candidateId, term, memberId, candidateTerm, granted, true);
            return;
        }

        if (candidateTerm < term || (candidateTerm > term && leaderAlive && !transfer))
        {
            publisher.vote(candidateId, term, memberId, candidateTerm, false, false);
            return;
        }
        if (candidateTerm > term)
        {
            becomeFollower(candidateTerm, -1);
        }
        final boolean granted = upToDate && (ElectionStateStore.NO_VOTE == votedFor || candidateId == votedFor);
        if (granted)
        {
            setTermAndVote(term, candidateId);
            electionDeadlineNs = nowNs + randomElectionTimeout();
        }
        publisher.vote(candidateId, term, memberId, candidateTerm, granted, false);
    }

    void onVote(
        final long voterTerm, final int voterId, final long candidateTerm, final boolean granted, final boolean preVote)
    {
        if (voterTerm > term && !granted)
        {
            becomeFollower(voterTerm, -1);
            return;
        }
        if (Role.CANDIDATE != role || !granted || null == config.member(voterId) || !config.member(voterId).voting())
        {
            return;
        }
        if (preVote && preVotePhase && candidateTerm == term + 1)
        {
            votes |= 1L << voterId;
            if (Long.bitCount(votes) >= quorum)
            {
                startElection(false);
            }
        }
        else if (!preVote && !preVotePhase && candidateTerm == term)
        {
            votes |= 1L << voterId;
            if (Long.bitCount(votes) >= quorum)
            {
                becomeLeader();
            }
        }
    }

    void onTimeoutNow(final long leaderTerm, final int fromLeaderId)
    {
        if (voting && leaderTerm == term && fromLeaderId == leaderId && Role.FOLLOWER == role &&
            !LogOrder.owesPromisedFrames(log, termIndex.lastTerm()))
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} takes over leadership from {1}", memberId, fromLeaderId);
            startElection(true);
        }
    }

    private void becomeLeader()
    {
        role = Role.LEADER;
        leaderId = memberId;
        transferTarget = -1;
        log.flush();
        logClock.start(nowNs);
        final int length = newTermEntry.wrapAndApplyHeader(entryScratch, 0, entryHeader)
            .timestamp(logClock.tick(nowNs)).term(term).leaderId(memberId).encodedLength();
        appendEntry(LogEntryType.NEW_LEADERSHIP_TERM, entryScratch, 0,
            io.lockstep.consensus.log.MessageHeaderEncoder.ENCODED_LENGTH + length);
        for (final PeerState peer : peers)
        {
            // Optimistic: assume followers hold what the leader held before this term; a rejection corrects it.
            peer.reset(termIndex.startOf(term), nowNs);
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} is leader of term {1} at position {2}",
            memberId, term, log.pendingPosition());
    }

    private void becomeFollower(final long newTerm, final int newLeaderId)
    {
        if (newTerm > term)
        {
            setTermAndVote(newTerm, ElectionStateStore.NO_VOTE);
        }
        if (Role.LEADER == role)
        {
            logClock.stop();
            LOGGER.log(System.Logger.Level.INFO, "member {0} steps down as leader in term {1}", memberId, term);
            pendingAppends.failAll(publisher, newLeaderId);
        }
        if (role != Role.FOLLOWER || leaderId != newLeaderId)
        {
            // An acknowledgement owed to the previous leader is owed to no one now.
            matchedPosition = -1;
            ackPending = false;
        }
        role = Role.FOLLOWER;
        leaderId = newLeaderId;
        transferTarget = -1;
        electionDeadlineNs = nowNs + randomElectionTimeout();
    }

    private void setTermAndVote(final long newTerm, final int newVote)
    {
        if (newTerm < term)
        {
            throw new IllegalStateException("term may not go back: " + term + " -> " + newTerm);
        }
        electionState.save(newTerm, newVote);
        term = newTerm;
        votedFor = newVote;
    }

    /**
     * The leader's connection closed: on a LAN that is almost always its process dying (the kernel closes its
     * sockets at once), so waiting out the election timeout would only lengthen the outage. Stand for election
     * within a heartbeat interval instead, and stop counting the leader as alive. Safe whatever the cause: the
     * pre-vote still needs a majority, and a member that still hears the leader refuses it (leader stickiness), so
     * a connection that dropped only here cannot depose a healthy leader.
     */
    private void onLeaderConnectionLost()
    {
        leaderConnectionUp = false;
        lastHeardFromLeaderNs = Long.MIN_VALUE / 2;
        electionDeadlineNs = Math.min(electionDeadlineNs,
            nowNs + (long)(random.nextDouble() * config.heartbeatIntervalNs()));
        LOGGER.log(System.Logger.Level.INFO, "member {0}: connection to leader {1} lost in term {2}", memberId,
            leaderId, term);
    }

    private void checkQuorum()
    {
        int heard = 1;
        for (final PeerState peer : peers)
        {
            if (peer.voting && nowNs - peer.lastHeardNs < config.electionTimeoutNs())
            {
                heard++;
            }
        }
        if (heard < quorum)
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} lost its quorum in term {1}", memberId, term);
            becomeFollower(term, -1);
        }
    }

    private long randomElectionTimeout()
    {
        // [t, 1.5t): wide enough (a hundred round trips on a LAN) that candidates rarely collide, narrow enough that
        // the first follower to notice a dead leader does so soon after t.
        return config.electionTimeoutNs() + (long)(random.nextDouble() * config.electionTimeoutNs() / 2);
    }

    // -------------------------------------------------------------------------------------------- follower side

    void onAppendRequest(
        final long leaderTerm,
        final int fromLeaderId,
        final long sequence,
        final long prevPosition,
        final long prevTerm,
        final long leaderCommit,
        final DirectBuffer buffer,
        final int offset,
        final int length)
    {
        if (leaderTerm < term)
        {
            publisher.appendResponse(fromLeaderId, term, memberId, sequence, false, log.pendingPosition(),
                log.durablePosition(), commitPosition, termIndex);
            return;
        }
        followLeader(leaderTerm, fromLeaderId);

        if (prevPosition > log.pendingPosition() || prevPosition < log.startPosition() ||
            termIndex.termAt(prevPosition) != prevTerm)
        {
            reject(fromLeaderId, sequence);
            return;
        }

        long position = prevPosition;
        int o = offset;
        final int end = offset + length;
        while (o < end)
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final long frameTerm = buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final int logBytes = padding ? frameLength : FrameDescriptor.alignedLength(frameLength);
            if (position < log.pendingPosition())
            {
                if (termIndex.termStartingAt(position) == frameTerm)
                {
                    position += logBytes;
                    o += padding ? HEADER_LENGTH : logBytes;
                    continue;
                }
                truncateConflict(position);
            }
            if (!appendReplicated(buffer, o, end - o, position, fromLeaderId, sequence))
            {
                return;
            }
            position = log.pendingPosition();
            break;
        }

        matchedPosition = position;
        leaderCommitSeen = Math.max(leaderCommitSeen, leaderCommit);
        ackPending = true;
        ackSequence = sequence;
    }

    /**
     * A leader of this term or a newer one spoke (log bytes or a snapshot chunk): follow it and reset the timers.
     */
    private void followLeader(final long leaderTerm, final int fromLeaderId)
    {
        if (leaderTerm > term || Role.FOLLOWER != role || leaderId != fromLeaderId)
        {
            becomeFollower(leaderTerm, fromLeaderId);
        }
        lastHeardFromLeaderNs = nowNs;
        leaderConnectionUp = true;
        electionDeadlineNs = nowNs + randomElectionTimeout();
    }

    private boolean appendReplicated(
        final DirectBuffer buffer, final int offset, final int length, final long position, final int fromLeaderId,
        final long sequence)
    {
        try
        {
            long result = log.appendFrames(buffer, offset, length);
            if (RaftLog.BACK_PRESSURED == result)
            {
                log.flush();
                result = log.appendFrames(buffer, offset, length);
                if (RaftLog.BACK_PRESSURED == result)
                {
                    throw new IllegalStateException("append block of " + length + " bytes exceeds the log batch");
                }
            }
        }
        catch (final ArchiveException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0} rejected log bytes from {1}: {2}",
                memberId, fromLeaderId, ex.getMessage());
            reject(fromLeaderId, sequence);
            return false;
        }
        long p = position;
        for (int o = offset; o < offset + length; )
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final int frameType = buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == frameType;
            termIndex.onFrame(buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN), p);
            logClock.observeFrame(buffer, o, frameType);
            p += padding ? frameLength : FrameDescriptor.alignedLength(frameLength);
            o += padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
        }
        return true;
    }

    private void truncateConflict(final long position)
    {
        // State-machine safety: committed entries are never removed. A leader that asks for it is broken.
        if (position < commitPosition)
        {
            throw new IllegalStateException("member " + memberId + " asked to truncate committed entries: position " +
                position + " < commit " + commitPosition);
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} truncates conflicting log at {1}", memberId, position);
        log.flush();
        log.truncate(position);
        termIndex.truncate(position);
        matchedPosition = Math.min(matchedPosition, position);
    }

    private void reject(final int toLeaderId, final long sequence)
    {
        ackPending = false;
        publisher.appendResponse(toLeaderId, term, memberId, sequence, false, log.pendingPosition(),
            log.durablePosition(), commitPosition, termIndex);
    }

    private int sendAck()
    {
        final long durable = Math.min(log.durablePosition(), matchedPosition);
        final long appended = Math.min(log.appendedPosition(), matchedPosition);
        final long newCommit = Math.min(leaderCommitSeen, durable);
        if (newCommit > commitPosition)
        {
            commitPosition = newCommit;
        }
        if (publisher.appendResponse(leaderId, term, memberId, ackSequence, true, appended, durable, commitPosition,
            termIndex))
        {
            ackPending = false;
            return 1;
        }
        return 0;
    }

    // ---------------------------------------------------------------------------------------------- leader side

    void onAppendResponse(final AppendResponseDecoder response)
    {
        final long responseTerm = response.term();
        if (responseTerm > term)
        {
            becomeFollower(responseTerm, -1);
            return;
        }
        final PeerState peer = peer(response.followerId());
        if (Role.LEADER != role || responseTerm < term || null == peer)
        {
            return;
        }
        peer.lastHeardNs = nowNs;
        if (response.success() == io.lockstep.consensus.codecs.BooleanType.TRUE)
        {
            peer.appendedAck = Math.max(peer.appendedAck, response.appendedPosition());
            peer.matchPosition = Math.max(peer.matchPosition, response.durablePosition());
            return;
        }
        if (response.sequence() < peer.resetSequence)
        {
            return;
        }
        final long agreed = agreedPosition(response);
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} replicates to {1} again from {2}", memberId, peer.id, agreed);
        peer.nextPosition = agreed;
        peer.appendedAck = agreed;
        peer.resetSequence = peer.sequence;
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

    private int replicate()
    {
        int work = 0;
        final long end = log.appendedPosition();
        for (final PeerState peer : peers)
        {
            if (peer.nextPosition < log.startPosition() || peer.installPosition >= 0)
            {
                work += snapshotTransfer.send(peer, term, nowNs, config.heartbeatIntervalNs());
                continue;
            }
            while (peer.nextPosition < end &&
                peer.nextPosition - Math.max(peer.appendedAck, 0) < config.maxInFlightBytes())
            {
                final long from = peer.nextPosition;
                replicationPeer = peer;
                replicationSent = false;
                final int bytes = log.readBlock(from, end, config.maxBlockBytes(), blockSender);
                if (0 == bytes || !replicationSent)
                {
                    break;
                }
                work++;
            }
            if (nowNs - peer.lastSentNs >= config.heartbeatIntervalNs())
            {
                if (publisher.appendRequest(peer.id, term, memberId, peer.sequence, peer.nextPosition,
                    termIndex.termAt(peer.nextPosition), commitPosition, entryScratch, 0, 0))
                {
                    peer.sequence++;
                    peer.lastSentNs = nowNs;
                    work++;
                }
            }
        }
        return work;
    }

    void onInstallSnapshotResponse(
        final long responseTerm, final int followerId, final long position, final long nextOffset,
        final boolean installed)
    {
        if (responseTerm > term)
        {
            becomeFollower(responseTerm, -1);
            return;
        }
        final PeerState peer = peer(followerId);
        if (Role.LEADER == role && responseTerm == term && null != peer)
        {
            peer.lastHeardNs = nowNs;
            snapshotTransfer.onResponse(peer, position, nextOffset, installed);
        }
    }

    void onInstallSnapshot(
        final long leaderTerm,
        final int fromLeaderId,
        final long position,
        final long snapshotTerm,
        final long offset,
        final long totalLength,
        final DirectBuffer buffer,
        final int chunkOffset,
        final int chunkLength)
    {
        if (leaderTerm < term)
        {
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, -1, false);
            return;
        }
        followLeader(leaderTerm, fromLeaderId);
        if (null == snapshots || position <= commitPosition)
        {
            // Already hold it (a repeat after the install finished): the leader replicates log from here on.
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, totalLength, null != snapshots);
            return;
        }
        final SnapshotStorage.Loaded loaded = snapshotTransfer.receive(fromLeaderId, term, position, snapshotTerm,
            offset, totalLength, buffer, chunkOffset, chunkLength);
        if (null == loaded)
        {
            return;
        }
        // Raft's rule for an installed snapshot: if this log holds the snapshot's last entry (same position, same
        // term), the entries after it are kept - they may be committed entries this member acknowledged, and
        // discarding them could lose them. Otherwise the log is discarded: an entry that disagrees with committed
        // state at the snapshot's position, and by log matching every entry after it, was never committed.
        log.flush();
        final boolean retain = log.startPosition() <= position && position <= log.pendingPosition() &&
            termIndex.termAt(position) == snapshotTerm && isFrameBoundary(position);
        if (!retain)
        {
            log.reset(position, snapshotTerm);
            rebuildTermIndex();
        }
        commitPosition = Math.max(commitPosition, position);
        matchedPosition = position;
        ackPending = false;
        LOGGER.log(System.Logger.Level.INFO, "member {0} installed snapshot at {1} from {2} ({3})", memberId,
            position, fromLeaderId, retain ? "log after it kept" : "log restarted at it");
        if (null != serviceHooks)
        {
            serviceHooks.onSnapshotInstalled(loaded);
        }
        publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, totalLength, true);
    }

    void onSnapshotRequest(final int endpoint, final long correlationId)
    {
        if (Role.LEADER != role || null == serviceHooks || null == snapshots)
        {
            answerTool(endpoint, correlationId, false, -1);
            return;
        }
        serviceHooks.onSnapshotRequest(endpoint, correlationId);
    }

    private PeerState replicationPeer;
    private boolean replicationSent;
    /** Held in a field: a method reference at the call site would allocate on every block. */
    private final io.lockstep.archive.BlockHandler blockSender = this::sendBlock;

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

    private void updateCommitPosition()
    {
        int n = 0;
        quorumScratch[n++] = log.durablePosition();
        for (final PeerState peer : peers)
        {
            if (peer.voting)
            {
                quorumScratch[n++] = peer.matchPosition;
            }
        }
        // Insertion sort, descending: a handful of members, no allocation.
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
        final long candidate = quorumScratch[quorum - 1];
        // Raft §5.4.2: only an entry of the leader's own term is committed by counting replicas.
        if (candidate > commitPosition && termIndex.termAt(candidate) == term)
        {
            commitPosition = candidate;
            pendingAppends.ackCommitted(publisher, commitPosition, memberId);
        }
    }

    private void progressTransfer()
    {
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
        else if (target.matchPosition >= log.appendedPosition() && publisher.timeoutNow(target.id, term, memberId))
        {
            transferTarget = -1;
        }
    }

    private PeerState peer(final int id)
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

    private void appendEntry(final int type, final DirectBuffer buffer, final int offset, final int length)
    {
        final long before = log.pendingPosition();
        long result = log.append(term, type, buffer, offset, length);
        if (RaftLog.BACK_PRESSURED == result)
        {
            log.flush();
            result = log.append(term, type, buffer, offset, length);
        }
        if (result < 0)
        {
            throw new IllegalStateException("append failed: " + result);
        }
        // The frame (or the padding a segment end put before it) starts where the log ended.
        termIndex.onFrame(term, before);
    }

    // --------------------------------------------------------------------------------------------- client side

    void onClientAppend(
        final int endpoint, final long correlationId, final DirectBuffer buffer, final int offset, final int length)
    {
        if (Role.LEADER != role || transferTarget >= 0)
        {
            publisher.clientAppendAck(endpoint, correlationId, AppendStatus.NOT_LEADER, -1, leaderId);
            return;
        }
        if (pendingAppends.isFull() || length > config.maxBlockBytes() - 2 * HEADER_LENGTH)
        {
            publisher.clientAppendAck(endpoint, correlationId,
                pendingAppends.isFull() ? AppendStatus.BACK_PRESSURED : AppendStatus.REJECTED, -1, leaderId);
            return;
        }
        appendEntry(LogEntryType.CLIENT_APPEND, buffer, offset, length);
        pendingAppends.add(log.pendingPosition(), correlationId, endpoint);
    }

    void onClientProtocol(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        if (null != clientIngress && endpoint >= Transport.CLIENT_ENDPOINT_BASE)
        {
            clientIngress.onClientMessage(endpoint, buffer, offset, length);
        }
    }

    /**
     * Where client-protocol messages go (client sessions); without one they are dropped.
     *
     * @param ingress the handler, or null.
     */
    public void clientIngress(final ClientIngress ingress)
    {
        this.clientIngress = ingress;
    }

    /**
     * Append an entry in this leader's term, for the session and service layer.
     *
     * @return the position after the entry, or -1 if this member is not the leader (or is handing over).
     */
    public long appendLogEntry(final int type, final DirectBuffer buffer, final int offset, final int length)
    {
        if (Role.LEADER != role || transferTarget >= 0)
        {
            return -1;
        }
        appendEntry(type, buffer, offset, length);
        return log.pendingPosition();
    }

    /**
     * @return the monotonic clock reading of the current duty cycle: for this member's own timeouts, never for
     * anything written to the log.
     */
    public long nowNs()
    {
        return nowNs;
    }

    /**
     * @return log time for entries this leader appends in the current duty cycle (epoch nanoseconds; see
     * {@link LogClock}).
     */
    public long logTimeNs()
    {
        return logClock.nowNs();
    }

    /**
     * Take note of a log time this member's state already covers (the timestamp of the snapshot it starts from), so
     * that it never stamps an entry earlier.
     */
    public void observeLogTime(final long timestampNs)
    {
        logClock.observe(timestampNs);
    }

    void onStatusRequest(final int endpoint, final long correlationId)
    {
        publisher.statusResponse(endpoint, correlationId, memberId, role, term, leaderId, log.appendedPosition(),
            commitPosition, log.startPosition(), null == snapshots ? -1 : snapshots.durablePosition(),
            null == serviceHooks ? -1 : serviceHooks.appliedPosition(),
            null == serviceHooks ? 0 : serviceHooks.stateHash());
    }

    void onTransferLeadership(final int endpoint, final long correlationId, final int target)
    {
        final Member member = config.member(target);
        if (Role.LEADER != role || null == member || !member.voting() || target == memberId)
        {
            publisher.clientAppendAck(endpoint, correlationId,
                Role.LEADER != role ? AppendStatus.NOT_LEADER : AppendStatus.REJECTED, -1, leaderId);
            return;
        }
        transferTarget = target;
        transferDeadlineNs = nowNs + config.electionTimeoutNs();
        publisher.clientAppendAck(endpoint, correlationId, AppendStatus.OK, log.appendedPosition(), leaderId);
    }
}
