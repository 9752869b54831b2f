package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import io.lockstep.consensus.codecs.Role;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;

import java.util.Random;
import java.util.function.LongUnaryOperator;

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
 * <p>
 * The conductor: it owns the role, term and vote, and the transitions between roles, and holds the election rules.
 * Each other rule lives in its own class: {@link LogOrder} (which log is more up to date, and lost frames still
 * owed), {@link FollowerLog} (taking a leader's bytes, conflicts, joining a snapshot), {@link LeaderReplication}
 * (follower progress, streaming, the commit rule, check-quorum, transfer), {@link SnapshotTransfer} (install
 * snapshot), {@link LogClock} (log time), {@link AdminRequests} (tools and drivers).
 */
public final class ConsensusAgent implements Agent
{
    private static final System.Logger LOGGER = System.getLogger(ConsensusAgent.class.getName());

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
    // Made at start: a method reference made inside compactLog would be linked at the first purge, under load.
    private final LongUnaryOperator termAt = termIndex::termAt;
    private final LeaderReplication leader;
    private final AdminRequests admin;
    private final FollowerLog followerLog;
    private final MemberMetrics metrics = new MemberMetrics();
    private final MemberErrors errors;
    private final PeerProblems peerProblems;
    private final PeerState[] peers;
    private final Membership membership;
    private final ClusterFormation formation;
    private final MembershipExchange membershipExchange;
    private final PendingAppends pendingAppends;
    private final FollowerAcks acks;
    private final FrameRepair repair;
    private final OwedFrames owedFrames;
    private final NewTermEntry newTermEntry = new NewTermEntry();

    private Role role = Role.FOLLOWER;
    private long term;
    private int votedFor;
    private int leaderId = -1;
    private long commitPosition;
    private long nowNs;
    private int appVersion;
    private long electionDeadlineNs;
    private long lastHeardFromLeaderNs = Long.MIN_VALUE / 2;
    private long grantedVoteAtNs = Long.MIN_VALUE / 2;
    private final VoteTally tally = new VoteTally();
    private boolean started;

    /** Set by each message from the leader; cleared when its connection drops (handled once per drop). */
    private boolean leaderConnectionUp;
    private ClientIngress clientIngress;
    private ServiceHooks serviceHooks;
    private final SnapshotTransfer snapshotTransfer;
    private final SnapshotInstaller snapshotInstaller;

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
        this.config = config.validate();
        this.memberId = config.memberId();
        this.clock = clock;
        this.logClock = new LogClock(wallClock);
        this.errors = new MemberErrors(wallClock, metrics);
        this.peerProblems = new PeerProblems(config.memberId(), errors, this::nowNs);
        this.transport = transport;
        this.log = log;
        this.electionState = electionState;
        this.random = random;
        this.membership = new Membership(config, electionState);
        this.formation = new ClusterFormation(memberId, electionState, log, membership, errors);
        this.publisher = new MemberProtocolPublisher(transport, config.maxBlockBytes(), membership, formation);
        this.membershipExchange = new MembershipExchange(this, membership, publisher, errors,
            electionState, log, formation);
        this.pendingAppends = new PendingAppends(config.maxPendingClientAppends());
        this.snapshotTransfer = new SnapshotTransfer(publisher, memberId, Math.min(64 * 1024, config.maxBlockBytes()),
            peerProblems);

        this.acks = new FollowerAcks(memberId, log, termIndex, publisher, this::nowNs);
        this.leader = new LeaderReplication(config, log, termIndex, publisher, snapshotTransfer, pendingAppends,
            membership);
        this.followerLog = new FollowerLog(memberId, log, termIndex, logClock, membership, peerProblems);
        this.repair = new FrameRepair(memberId, log, followerLog, acks, leader, metrics, errors,
            () -> becomeFollower(term, -1));
        this.owedFrames = new OwedFrames(memberId, log, termIndex, membership, formation, publisher, metrics, errors);
        this.snapshotInstaller = new SnapshotInstaller(memberId, membership, followerLog, acks, snapshotTransfer,
            membershipExchange, publisher);
        this.admin = new AdminRequests(this, config, log, transport, publisher, leader, pendingAppends, acks,
            followerLog);
        this.adapter = new MemberProtocolAdapter(this, transport, new StandbyRelay(this, transport, config.relay()),
            admin, formation, owedFrames);
        this.peers = leader.peers();
        this.term = electionState.term();
        this.votedFor = electionState.votedFor();
        followerLog.rebuildTermIndex();
        if (termIndex.lastTerm() > term)
        {
            throw new IllegalStateException("log holds term " + termIndex.lastTerm() + " beyond the stored term "
                + term);
        }
        LogOrder.warnIfOwing(log, termIndex.lastTerm(), memberId);
    }

    public String roleName()
    {
        return "consensus-" + memberId;
    }

    /**
     * Attach the service layer: its snapshots (to compact the log and to stream to followers that need purged log)
     * and its hooks.
     */
    public void attachService(final SnapshotStorage snapshots, final ServiceHooks hooks)
    {
        this.serviceHooks = hooks;
        snapshotTransfer.storage(snapshots);
        admin.attachService(snapshots, hooks);
    }

    /**
     * Start from a loaded snapshot: that much is committed. Whether the log joins it, is restarted at it, or is kept
     * and the start refused is {@link FollowerLog#startFromSnapshot}'s decision.
     */
    public void startFromSnapshot(final long position, final long snapshotTerm)
    {
        membership.onCommit(position);
        followerLog.startFromSnapshot(position, snapshotTerm);
        commitPosition = Math.max(commitPosition, position);
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
            bound = leader.retainedFor(bound, nowNs);
        }
        if (bound <= log.startPosition())
        {
            return log.startPosition();
        }
        log.flush();
        return log.purge(bound, termAt);
    }

    /** @param appVersion the service's version, written into the entry that starts each term this member leads. */
    public void appVersion(final int appVersion)
    {
        this.appVersion = appVersion;
    }

    /** Answer a tool's request (sent as a ClientAppendAck). */
    public void answerTool(final int endpoint, final long correlationId, final boolean ok, final long position)
    {
        admin.answer(endpoint, correlationId, ok, position);
    }

    /** @return the handler of tool and driver requests. */
    AdminRequests admin()
    {
        return admin;
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
            work += log.flush() >= 0 && null == log.writeProblem() ? 1 : 0; // a full disk is no work: idle meanwhile
        }
        work += repair.onDutyCycle(role, nowNs);

        if (Role.LEADER == role)
        {
            work += leader.replicate(term, commitPosition, nowNs);
            commitPosition = leader.commitPosition(term, commitPosition);
            membership.onCommit(commitPosition);
            formation.onCommit(commitPosition, term, termIndex);
            if (!membership.isVoter(memberId) && !membership.isCommittedVoter(memberId))
            {
                becomeFollower(term, -1); // its own removal (or demotion) committed
            }
            checkQuorum();
            leader.progressTransfer(term, nowNs);
        }
        else
        {
            if (acks.pending())
            {
                commitPosition = acks.sendAck(leaderId, term, commitPosition);
                membership.onCommit(commitPosition);
                formation.onCommit(commitPosition, term, termIndex);
                work += acks.pending() ? 0 : 1;
            }
            if (leaderConnectionUp && leaderId >= 0 && !transport.isConnected(leaderId))
            {
                onLeaderConnectionLost();
            }
            if (membership.isVoter(memberId) && nowNs >= electionDeadlineNs && !membershipExchange.diverged())
            {
                work += standForElection();
            }
        }
        membershipExchange.announce(peers, transport);
        peerProblems.reportIfOver(nowNs);
        work += transport.flush(nowNs);
        // Gauges for the metrics endpoint: a few release stores per duty cycle, no allocation.
        final boolean owes = LogOrder.owesPromisedFrames(log, termIndex.lastTerm());
        metrics.onDutyCycle(Role.LEADER == role ? 2 : Role.CANDIDATE == role ? 1 : 0, term, leaderId,
            log.appendedPosition(), commitPosition, log.startPosition(), Role.LEADER == role ? leader.maxLag() : 0,
            owes, null == serviceHooks);
        owedFrames.onDutyCycle(owes);
        metrics.onLeaderLag(Role.LEADER == role, leader);
        return work;
    }

    /**
     * @return true if a connection to any other member is up.
     */
    public boolean anyPeerConnected()
    {
        return leader.anyPeerConnected(transport);
    }

    /**
     * @return this member's counters and gauges (written by the member thread, readable from any).
     */
    public MemberMetrics metrics()
    {
        return metrics;
    }

    /** @return where what a peer sent that was dropped or refused is told (member thread only). */
    PeerProblems peerProblems()
    {
        return peerProblems;
    }

    /** @return this member's recent errors (member thread only). */
    public MemberErrors errors()
    {
        return errors;
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

    // ---------------------------------------------------------------------------------------------- membership

    /** @return who votes and who only learns, in which epoch. */
    public Membership membership()
    {
        return membership;
    }

    /** @return the cluster this member belongs to, and whether it may vote yet ({@link ClusterFormation}). */
    public ClusterIdentity clusterIdentity()
    {
        return formation.identity();
    }

    /** @return the epoch checks and notices between members, promotion, and why this member stopped, if it did. */
    public MembershipExchange membershipExchange()
    {
        return membershipExchange;
    }

    /**
     * A newer membership epoch was adopted: a leader or candidate starts over as a follower (no longer voting, or
     * under a new quorum); a member in neither set stops for good.
     */
    void onMembershipAdopted()
    {
        // Terms of epoch e start at e << 32: the lost zone may have led terms no member here has heard of, and a
        // term led twice (once there, once here) would break log matching. Terms of a newer epoch are above all.
        becomeFollower(Math.max(term, Membership.firstTermOf(membership.epoch())), -1);
    }

    /** @return monotonic nanoseconds since a leader last spoke to this member, or -1 if none has. */
    long sinceLeaderNs()
    {
        return lastHeardFromLeaderNs < 0 ? -1 : nowNs - lastHeardFromLeaderNs;
    }

    /** @return where this member's current term starts in its log. */
    long termStartPosition()
    {
        return termIndex.startOf(term);
    }

    /** @return the term of the last entry in this member's log. */
    public long lastLogTerm()
    {
        return termIndex.lastTerm();
    }

    // ----------------------------------------------------------------------------------------------- elections

    private int standForElection()
    {
        if (!formation.mayElect())
        {
            electionDeadlineNs = nowNs + randomElectionTimeout();
            return formation.ask(publisher, peers, term, termIndex.lastTerm()); // new, perhaps wiped: it only asks
        }
        if (!LogOrder.mayStand(log, termIndex.lastTerm()))
        {
            // Lost frames it may have helped commit (as leader it could overwrite them), or a disk it cannot write.
            electionDeadlineNs = nowNs + randomElectionTimeout();
            LogOrder.warnNotStanding(log, termIndex.lastTerm(), memberId);
            // No leader heard for a timeout: ask the others whether what it owes was ever committed.
            return null == log.writeProblem() ? owedFrames.ask(peers, term, nowNs) : 0;
        }
        startPreVote();
        return 1;
    }

    private void startPreVote()
    {
        metrics.increment(MemberMetrics.ELECTIONS_STARTED);
        role = Role.CANDIDATE;
        leaderId = -1;
        tally.start(memberId, true);
        electionDeadlineNs = nowNs + randomElectionTimeout();
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} pre-vote for term {1}", memberId, term + 1);
        if (tally.won(membership.quorum()))
        {
            startElection(false);
            return;
        }
        publisher.requestVotes(peers, term + 1, memberId, termIndex.lastTerm(), log.pendingPosition(), true, false);
    }

    private void startElection(final boolean transfer)
    {
        role = Role.CANDIDATE;
        leaderId = -1;
        setTermAndVote(term + 1, memberId);
        tally.start(memberId, false);
        electionDeadlineNs = nowNs + randomElectionTimeout();
        LOGGER.log(System.Logger.Level.INFO, "member {0} stands for election in term {1}", memberId, term);
        if (tally.won(membership.quorum()))
        {
            becomeLeader();
            return;
        }
        publisher.requestVotes(peers, term, memberId, termIndex.lastTerm(), log.pendingPosition(), false, transfer);
    }

    void onRequestVote(
        final long candidateTerm,
        final int candidateId,
        final long lastLogTerm,
        final long lastLogPosition,
        final boolean preVote,
        final boolean transfer)
    {
        if (!membership.isMember(memberId))
        {
            return; // Whom to ask and whose votes count is the candidate's configuration (Raft §4.1), not this one's.
        }
        if (!formation.mayElect())
        {
            formation.answer(publisher, candidateId, term, candidateTerm, preVote);
            return;
        }
        // A member that hears a live leader (or is one) ignores candidates: a partitioned member rejoining with
        // a high term cannot depose a healthy leader. A leadership transfer is the one exception.
        final boolean leaderAlive = Role.LEADER == role || nowNs - lastHeardFromLeaderNs < config.electionTimeoutNs();
        final boolean upToDate = LogOrder.candidateUpToDate(log, termIndex.lastTerm(), lastLogTerm, lastLogPosition);
        if (preVote)
        {
            // A vote granted within a timeout stands for a winner not heard from yet (a retrying candidate must not
            // depose it before its first append), unless it is that candidate asking.
            final boolean granted = candidateTerm > term && upToDate && (transfer || !leaderAlive &&
                (candidateId == votedFor || nowNs - grantedVoteAtNs >= config.electionTimeoutNs()));
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
            grantedVoteAtNs = nowNs;
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
        if (Role.CANDIDATE != role || !membership.isVoter(voterId))
        {
            return;
        }
        if (!granted)
        {
            if (tally.refuse(voterId, preVote, candidateTerm, term, membership.voters(), membership.quorum(),
                transport))
            {
                electionDeadlineNs = Math.min(electionDeadlineNs, nowNs + config.candidateRetryNs(random.nextDouble()));
            }
            return;
        }
        if (!tally.count(voterId, preVote, candidateTerm, preVote ? term + 1 : term, membership.quorum()))
        {
            return;
        }
        if (preVote)
        {
            startElection(false);
        }
        else
        {
            becomeLeader();
        }
    }

    void onTimeoutNow(final long leaderTerm, final int fromLeaderId)
    {
        if (membership.isVoter(memberId) && leaderTerm == term && fromLeaderId == leaderId && Role.FOLLOWER == role &&
            formation.mayElect() && LogOrder.mayStand(log, termIndex.lastTerm()))
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} takes over leadership from {1}", memberId, fromLeaderId);
            startElection(true);
        }
    }

    private void becomeLeader()
    {
        role = Role.LEADER;
        leaderId = memberId;
        tally.onLeaderHeard();
        metrics.increment(MemberMetrics.LEADERSHIPS_WON);
        formation.onLeading(random.nextLong(), random.nextLong());
        log.flush();
        logClock.start(nowNs);
        final NewTermEntry entry = newTermEntry.encode(logClock.tick(nowNs), term, memberId, appVersion, membership);
        if (!leader.appendEntry(term, LogEntryType.NEW_LEADERSHIP_TERM, entry.buffer(), 0, entry.length()))
        {
            throw new IllegalStateException("member " + memberId + " cannot write its log as it becomes leader: " +
                log.writeProblem());
        }
        leader.startTerm(termIndex.startOf(term), nowNs);
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
            metrics.increment(MemberMetrics.STEP_DOWNS);
            LOGGER.log(System.Logger.Level.INFO, "member {0} steps down as leader in term {1}", memberId, term);
            pendingAppends.failAll(publisher, newLeaderId);
        }
        if (role != Role.FOLLOWER || leaderId != newLeaderId)
        {
            // An acknowledgement owed to the previous leader is owed to no one now.
            acks.forget();
        }
        role = Role.FOLLOWER;
        leaderId = newLeaderId;
        leader.onFollowing();
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
        if (!leader.hasQuorum(nowNs))
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} lost its quorum in term {1}", memberId, term);
            becomeFollower(term, -1);
        }
    }

    private long randomElectionTimeout()
    {
        return config.electionWaitNs(random.nextDouble());
    }

    // -------------------------------------------------------------------------------------------- follower side

    void onAppendRequest(
        final long leaderTerm,
        final int fromLeaderId,
        final long sequence,
        final long prevPosition,
        final long prevTerm,
        final long leaderCommit,
        final long clusterIdHigh,
        final long clusterIdLow,
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
        if (!formation.acceptLeader(clusterIdHigh, clusterIdLow, leaderTerm, fromLeaderId))
        {
            return;
        }
        followLeader(leaderTerm, fromLeaderId);

        final long before = log.pendingPosition();
        final long position = followerLog.accept(prevPosition, prevTerm, buffer, offset, length, commitPosition,
            fromLeaderId, leaderTerm);
        metrics.add(MemberMetrics.LOG_BYTES_REPLICATED_IN, Math.max(0, log.pendingPosition() - before));
        if (followerLog.truncatedAt() >= 0)
        {
            acks.onTruncated(followerLog.truncatedAt());
        }
        if (FollowerLog.DIVERGED == position)
        {
            membershipExchange.onDiverged(followerLog.divergedAt(), commitPosition, fromLeaderId);
            return;
        }
        if (FollowerLog.REJECTED == position)
        {
            acks.reject(fromLeaderId, term, sequence, leaderTerm, commitPosition);
            return;
        }
        acks.onAccepted(position, leaderCommit, sequence);
        membershipExchange.onMatched(position, commitPosition, leaderTerm);
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
        grantedVoteAtNs = Long.MIN_VALUE / 2;
        tally.onLeaderHeard();
        leaderConnectionUp = true;
        electionDeadlineNs = nowNs + randomElectionTimeout();
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
        if (Role.LEADER == role && responseTerm == term)
        {
            leader.onAppendResponse(response, nowNs);
        }
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
        if (Role.LEADER == role && responseTerm == term)
        {
            leader.onInstallSnapshotResponse(followerId, position, nextOffset, installed, nowNs);
        }
    }

    /**
     * A snapshot chunk: answered "behind" from a stale leader, dropped from another cluster's (as its appends are),
     * and otherwise the leader's, which this member follows and whose chunk {@link SnapshotInstaller} takes.
     */
    void onInstallSnapshot(final InstallSnapshotDecoder chunk, final DirectBuffer buffer, final int bytesOffset)
    {
        final long leaderTerm = chunk.term();
        final int fromLeaderId = chunk.leaderId();
        if (leaderTerm < term)
        {
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, chunk.snapshotPosition(), -1, false);
            return;
        }
        if (!formation.acceptLeader(chunk.clusterIdHigh(), chunk.clusterIdLow(), leaderTerm, fromLeaderId))
        {
            return;
        }
        followLeader(leaderTerm, fromLeaderId);
        commitPosition = snapshotInstaller.onChunk(chunk, buffer, bytesOffset, term, commitPosition, serviceHooks);
    }

    void onClientProtocol(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        if (null != clientIngress && endpoint >= Transport.CLIENT_ENDPOINT_BASE)
        {
            clientIngress.onClientMessage(endpoint, buffer, offset, length);
        }
    }

    /** @param ingress where client-protocol messages go (client sessions), or null: they are dropped. */
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
        if (Role.LEADER != role || leader.transferring())
        {
            return -1;
        }
        return leader.appendEntry(term, type, buffer, offset, length) ? log.pendingPosition() : -1;
    }

    /** @return this duty cycle's monotonic clock reading: for this member's own timeouts, never for the log. */
    public long nowNs()
    {
        return nowNs;
    }

    /** @return log time for entries this leader appends in this duty cycle (epoch ns; see {@link LogClock}). */
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
}
