package io.lockstep.consensus;

import io.lockstep.archive.BlockHandler;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionEventCode;
import io.lockstep.cluster.codecs.SessionEventEncoder;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.BackupChunkEncoder;
import io.lockstep.consensus.codecs.BackupStatus;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ErrorsResponseEncoder;
import io.lockstep.consensus.codecs.MembershipAction;
import io.lockstep.consensus.codecs.PromoteResponseEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.log.MembershipChangeEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;

/**
 * Requests from tools and drivers (clients that speak the member protocol, {@code Hello} id -1): opaque appends
 * acknowledged once committed, status, leadership transfer, snapshot on demand. Every answer is a
 * {@code ClientAppendAck} (or a {@code StatusResponse}) naming the leader, so a tool that asked a follower knows where
 * to go. Not part of Raft: a member that never serves a tool runs the same.
 */
final class AdminRequests
{
    private final ConsensusAgent agent;
    private final ConsensusConfig config;
    private final RaftLog log;
    private final Transport transport;
    private final MemberProtocolPublisher publisher;
    private final LeaderReplication leader;
    private final PendingAppends pendingAppends;
    private final FollowerAcks acks;
    private final FollowerLog followerLog;
    private ServiceHooks serviceHooks;
    private SnapshotStorage snapshots;
    private final UnsafeBuffer refusalBuffer = new UnsafeBuffer(new byte[256]);
    private final SessionEventEncoder refusal = new SessionEventEncoder();
    private final MessageHeaderEncoder refusalHeader = new MessageHeaderEncoder();
    /** A message's share of the errors response, which holds 600 bytes for each error with its kind and times. */
    static final int MAX_ERROR_MESSAGE_BYTES = 480;
    private final UnsafeBuffer errorsBuffer = new UnsafeBuffer(new byte[MemberErrors.MAX_DISTINCT * 600 + 256]);
    private final ErrorsResponseEncoder errorsEncoder = new ErrorsResponseEncoder();
    private final UnsafeBuffer changeBuffer = new UnsafeBuffer(new byte[128]);
    private final MembershipChangeEncoder changeEncoder =
        new MembershipChangeEncoder();
    private final io.lockstep.consensus.log.MessageHeaderEncoder changeHeader =
        new io.lockstep.consensus.log.MessageHeaderEncoder();
    private final PromoteResponseEncoder promoteEncoder =
        new PromoteResponseEncoder();
    /** A backup piece: at most this many bytes (a frame longer than this goes whole: see RaftLog#readBlock). */
    static final int BACKUP_PIECE_BYTES = 256 * 1024;
    private final UnsafeBuffer backupBytes = new UnsafeBuffer(new byte[2 * BACKUP_PIECE_BYTES]);
    private final UnsafeBuffer backupBuffer = new UnsafeBuffer(new byte[2 * BACKUP_PIECE_BYTES + 256]);
    private final BackupChunkEncoder backupEncoder = new BackupChunkEncoder();
    private final BlockHandler backupBlock = this::onBackupBlock;
    private int backupBlockLength;
    private long backupBlockEnd = -1;
    private final io.lockstep.consensus.codecs.MessageHeaderEncoder memberHeader =
        new io.lockstep.consensus.codecs.MessageHeaderEncoder();

    AdminRequests(
        final ConsensusAgent agent,
        final ConsensusConfig config,
        final RaftLog log,
        final Transport transport,
        final MemberProtocolPublisher publisher,
        final LeaderReplication leader,
        final PendingAppends pendingAppends,
        final FollowerAcks acks,
        final FollowerLog followerLog)
    {
        this.acks = acks;
        this.followerLog = followerLog;
        this.agent = agent;
        this.config = config;
        this.log = log;
        this.transport = transport;
        this.publisher = publisher;
        this.leader = leader;
        this.pendingAppends = pendingAppends;
    }

    void attachService(final SnapshotStorage snapshots, final ServiceHooks hooks)
    {
        this.snapshots = snapshots;
        this.serviceHooks = hooks;
    }

    /**
     * A driver's opaque entry: appended in this leader's term, acknowledged with its position once committed.
     */
    void onClientAppend(
        final int endpoint, final long correlationId, final DirectBuffer buffer, final int offset, final int length)
    {
        if (Role.LEADER != agent.role() || leader.transferring())
        {
            reply(endpoint, correlationId, AppendStatus.NOT_LEADER, -1);
            return;
        }
        if (pendingAppends.isFull() || length > config.maxBlockBytes() - 2 * HEADER_LENGTH)
        {
            reply(endpoint, correlationId, pendingAppends.isFull() ? AppendStatus.BACK_PRESSURED :
                AppendStatus.REJECTED, -1);
            return;
        }
        final long position = agent.appendLogEntry(LogEntryType.CLIENT_APPEND, buffer, offset, length);
        agent.metrics().increment(MemberMetrics.CLIENT_APPENDS);
        pendingAppends.add(position, correlationId, endpoint);
    }

    /**
     * A tool request on a connection that did not prove the tool secret: refused, with the reason, in the
     * client protocol's words (so that a tool without the secret can say why), counted, and logged.
     */
    void refuseUntrusted(final int endpoint, final long correlationId, final int templateId)
    {
        agent.metrics().increment(MemberMetrics.UNTRUSTED_REQUESTS);
        agent.errors().record("untrusted-request", "refused tool request (template " + templateId + ") from a " +
            "connection that did not prove the tool secret");
        final int length = refusal.wrapAndApplyHeader(refusalBuffer, 0, refusalHeader)
            .correlationId(correlationId).sessionId(-1).code(SessionEventCode.AUTHENTICATION_REJECTED)
            .leaderId(agent.leaderId()).appliedSequence(-1).leaderTerm(agent.term())
            .detail("tool requests need the tool secret (lockstep.tool.secret.file)").encodedLength();
        transport.send(endpoint, refusalBuffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    /**
     * This member's recent errors, each message cut to {@link #MAX_ERROR_MESSAGE_BYTES} bytes of UTF-8 so that 64 of
     * them fit one response whatever characters they hold.
     */
    void onErrorsRequest(final int endpoint, final long correlationId)
    {
        final List<MemberErrors.Entry> recent = agent.errors().recent();
        final ErrorsResponseEncoder response = errorsEncoder.wrapAndApplyHeader(errorsBuffer, 0, memberHeader)
            .correlationId(correlationId).memberId(agent.memberId()).totalErrors(agent.errors().total());
        final ErrorsResponseEncoder.ErrorsEncoder group = response.errorsCount(recent.size());
        for (final MemberErrors.Entry e : recent)
        {
            final byte[] kind = e.kind().getBytes(StandardCharsets.UTF_8);
            final byte[] text = utf8Within(e.message(), MAX_ERROR_MESSAGE_BYTES);
            group.next().occurrences(e.count()).firstEpochNs(e.firstEpochNs()).lastEpochNs(e.lastEpochNs())
                .putKind(kind, 0, kind.length).putMessage(text, 0, text.length);
        }
        transport.send(endpoint, errorsBuffer, 0,
            io.lockstep.consensus.codecs.MessageHeaderEncoder.ENCODED_LENGTH + response.encodedLength());
    }

    /** The bytes of {@code message} in UTF-8, cut at a character to at most {@code maxBytes}, "..." included. */
    static byte[] utf8Within(final String message, final int maxBytes)
    {
        assert maxBytes >= 4 : "room for at least one character and the dots: " + maxBytes;
        final byte[] whole = message.getBytes(StandardCharsets.UTF_8);
        if (whole.length <= maxBytes)
        {
            return whole;
        }
        int end = maxBytes - 3;
        while (end > 0 && (whole[end] & 0xC0) == 0x80)
        {
            end--; // not inside a character's bytes
        }
        final byte[] cut = Arrays.copyOf(whole, end + 3);
        cut[end] = '.';
        cut[end + 1] = '.';
        cut[end + 2] = '.';
        return cut;
    }

    /**
     * A piece of this member's newest durable snapshot, or of its committed log, for {@code tool backup}: pulled by
     * the tool one piece at a time, so a backup costs the member one bounded read per request and no state.
     */
    void onBackupRequest(
        final int endpoint, final long correlationId, final boolean logPart, final long snapshotPosition,
        final long from, final long limit)
    {
        final long newest = null == snapshots ? -1 : snapshots.durablePosition();
        final long position = snapshotPosition >= 0 ? snapshotPosition : newest;
        final BackupChunkEncoder chunk = backupEncoder.wrapAndApplyHeader(backupBuffer, 0, memberHeader)
            .correlationId(correlationId).memberId(agent.memberId())
            .snapshotPosition(position)
            .snapshotTerm(position == newest && newest >= 0 ? snapshots.durableTerm() : -1)
            .snapshotLength(position == newest && newest >= 0 ? snapshots.durableLength() : -1)
            .commitPosition(agent.commitPosition()).logStartPosition(log.startPosition())
            .startPosition(from).endPosition(from);
        BackupStatus status = BackupStatus.OK;
        int length = 0;
        if (!logPart)
        {
            length = position < 0 ? 0 : snapshots.read(position, from, backupBytes, 0, BACKUP_PIECE_BYTES);
            status = position < 0 ? BackupStatus.NO_SNAPSHOT : length < 0 ? BackupStatus.GONE : BackupStatus.OK;
            chunk.endPosition(from + Math.max(0, length));
        }
        else if (from < log.startPosition())
        {
            status = BackupStatus.GONE;
        }
        else
        {
            backupBlockLength = 0;
            log.readBlock(from, Math.min(limit, agent.commitPosition()), BACKUP_PIECE_BYTES, backupBlock);
            length = backupBlockLength;
            chunk.endPosition(backupBlockEnd < 0 ? from : backupBlockEnd);
        }
        chunk.status(status).putBytes(backupBytes, 0, Math.max(0, length));
        transport.send(endpoint, backupBuffer, 0,
            io.lockstep.consensus.codecs.MessageHeaderEncoder.ENCODED_LENGTH + chunk.encodedLength());
    }

    private void onBackupBlock(
        final DirectBuffer buffer, final int offset, final int length, final long startPosition, final long endPosition)
    {
        backupBytes.putBytes(0, buffer, offset, length);
        backupBlockLength = length;
        backupBlockEnd = endPosition;
    }

    void onStatusRequest(final int endpoint, final long correlationId)
    {
        publisher.statusResponse(endpoint, correlationId, agent.memberId(), agent.role(), agent.term(),
            agent.leaderId(), log.appendedPosition(), agent.commitPosition(), log.startPosition(),
            null == snapshots ? -1 : snapshots.durablePosition(),
            null == serviceHooks ? -1 : serviceHooks.appliedPosition(),
            null == serviceHooks ? 0 : serviceHooks.stateHash(), Role.LEADER == agent.role() ? leader : null);
    }

    /**
     * {@code tool promote}: with check, this member's view (is a leader alive? how much log does it hold?); without,
     * adopt the new membership epoch in which the standbys vote ({@link MembershipExchange#promote}).
     */
    void onPromoteRequest(
        final int endpoint, final long correlationId, final boolean check, final long epoch, final long voters,
        final long learners)
    {
        final Membership membership = agent.membership();
        final String refusal = check ? null : agent.membershipExchange().promote(epoch, voters, learners);
        final byte[] detail = null == refusal ? new byte[0] : refusal.getBytes(StandardCharsets.UTF_8);
        final int length = promoteEncoder.wrapAndApplyHeader(errorsBuffer, 0, memberHeader)
            .correlationId(correlationId).memberId(agent.memberId())
            .accepted(null == refusal ? BooleanType.TRUE :
                BooleanType.FALSE)
            .configEpoch(membership.epoch()).voters(membership.voters()).learners(membership.learners())
            .term(agent.term()).leaderId(agent.leaderId()).sinceLeaderNs(agent.sinceLeaderNs())
            .durablePosition(log.durablePosition()).lastTerm(agent.lastLogTerm())
            .primaryCommitSeen(Math.max(acks.leaderCommitSeen(), agent.commitPosition()))
            .meanEntryBytes(followerLog.meanFrameBytes())
            .primaryCommitRate(acks.leaderCommitRate())
            .putDetail(detail, 0, detail.length).encodedLength();
        transport.send(endpoint, errorsBuffer, 0,
            io.lockstep.consensus.codecs.MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    void onTransferLeadership(final int endpoint, final long correlationId, final int target)
    {
        if (Role.LEADER != agent.role() || !leader.startTransfer(target, agent.nowNs()))
        {
            reply(endpoint, correlationId, Role.LEADER != agent.role() ? AppendStatus.NOT_LEADER :
                AppendStatus.REJECTED, -1);
            return;
        }
        reply(endpoint, correlationId, AppendStatus.OK, log.appendedPosition());
    }

    void onSnapshotRequest(final int endpoint, final long correlationId)
    {
        if (Role.LEADER != agent.role() || null == serviceHooks || null == snapshots)
        {
            answer(endpoint, correlationId, false, -1);
            return;
        }
        serviceHooks.onSnapshotRequest(endpoint, correlationId);
    }

    void onSuspendRequest(final int endpoint, final long correlationId, final boolean suspend)
    {
        if (Role.LEADER != agent.role() || null == serviceHooks)
        {
            answer(endpoint, correlationId, false, -1);
            return;
        }
        serviceHooks.onSuspendRequest(endpoint, correlationId, suspend);
    }

    void onShutdownRequest(final int endpoint, final long correlationId)
    {
        if (Role.LEADER != agent.role() || null == serviceHooks || null == snapshots)
        {
            answer(endpoint, correlationId, false, -1);
            return;
        }
        serviceHooks.onShutdownRequest(endpoint, correlationId);
    }

    /**
     * Answer a request the service layer completed (a snapshot on demand).
     */
    void answer(final int endpoint, final long correlationId, final boolean ok, final long position)
    {
        reply(endpoint, correlationId, ok ? AppendStatus.OK :
            Role.LEADER != agent.role() ? AppendStatus.NOT_LEADER : AppendStatus.REJECTED, position);
    }

    /**
     * One membership change, as a log entry (Raft's single-server change): add a member listed in the configuration
     * file as a non-voting member (it is sent the log, or the snapshot), promote a non-voting member that has caught
     * up to a voter, or remove a member. Refused (REJECTED, the reason in this member's errors) while another change
     * is in flight, before this leader has committed an entry of its term, or when the change does not make sense;
     * acknowledged with its position once committed.
     */
    void onMembershipChange(
        final int endpoint, final long correlationId, final MembershipAction action,
        final int id)
    {
        if (Role.LEADER != agent.role() || leader.transferring())
        {
            reply(endpoint, correlationId, AppendStatus.NOT_LEADER, -1);
            return;
        }
        final Membership m = agent.membership();
        final String refusal = membershipRefusal(m, action, id);
        if (null != refusal)
        {
            agent.errors().record("membership-change", "refused " + action + " of member " + id + ": " + refusal);
            reply(endpoint, correlationId, AppendStatus.REJECTED, -1);
            return;
        }
        final long bit = 1L << id;
        final long voters = switch (action)
        {
            case PROMOTE -> m.voters() | bit;
            case REMOVE -> m.voters() & ~bit;
            default -> m.voters();
        };
        final long learners = MembershipAction.ADD_LEARNER == action ?
            m.learners() | bit : m.learners() & ~bit;
        final int length = changeEncoder.wrapAndApplyHeader(changeBuffer, 0, changeHeader)
            .timestamp(agent.logTimeNs()).configEpoch(m.epoch()).configVersion(m.version() + 1)
            .voters(voters).learners(learners).encodedLength();
        final long start = log.pendingPosition();
        final long position = agent.appendLogEntry(MembershipChangeEncoder.TEMPLATE_ID,
            changeBuffer, 0, io.lockstep.consensus.log.MessageHeaderEncoder.ENCODED_LENGTH + length);
        m.onLogChange(start, m.epoch(), m.version() + 1, voters, learners);
        pendingAppends.add(position, correlationId, endpoint);
    }

    private String membershipRefusal(
        final Membership m, final MembershipAction action, final int id)
    {
        if (m.changeInFlight())
        {
            return "another membership change is not committed yet";
        }
        if (agent.commitPosition() <= agent.termStartPosition())
        {
            return "this leader has not yet committed an entry of its term (Raft's rule for single-server changes)";
        }
        if (pendingAppends.isFull())
        {
            return "too many requests waiting for commit";
        }
        if (!m.isConfigured(id))
        {
            return "member " + id + " has no address in the configuration file";
        }
        switch (action)
        {
            case ADD_LEARNER:
                return m.isMember(id) ? "member " + id + " is a member already" : null;
            case PROMOTE:
                if (!m.isLearner(id))
                {
                    return "member " + id + " is not a non-voting member";
                }
                final PeerState peer = leader.peer(id);
                if (null == peer || peer.matchPosition < agent.commitPosition() ||
                    agent.nowNs() - peer.lastHeardNs > config.electionTimeoutNs())
                {
                    return "member " + id + " has not caught up (it holds " + (null == peer ? -1 : peer.matchPosition) +
                        " of the committed " + agent.commitPosition() + ")";
                }
                return null;
            case REMOVE:
                if (!m.isMember(id))
                {
                    return "member " + id + " is not a member";
                }
                return m.isVoter(id) && Long.bitCount(m.voters()) == 1 ? "member " + id + " is the last voter" : null;
            default:
                return "unknown action";
        }
    }

    private void reply(final int endpoint, final long correlationId, final AppendStatus status, final long position)
    {
        publisher.clientAppendAck(endpoint, correlationId, status, position, agent.leaderId());
    }
}
