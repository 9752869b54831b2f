package io.lockstep.consensus;

import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.Role;
import org.agrona.DirectBuffer;

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
    private final MemberProtocolPublisher publisher;
    private final LeaderReplication leader;
    private final PendingAppends pendingAppends;
    private ServiceHooks serviceHooks;
    private SnapshotStorage snapshots;

    AdminRequests(
        final ConsensusAgent agent,
        final ConsensusConfig config,
        final RaftLog log,
        final MemberProtocolPublisher publisher,
        final LeaderReplication leader,
        final PendingAppends pendingAppends)
    {
        this.agent = agent;
        this.config = config;
        this.log = log;
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

    void onStatusRequest(final int endpoint, final long correlationId)
    {
        publisher.statusResponse(endpoint, correlationId, agent.memberId(), agent.role(), agent.term(),
            agent.leaderId(), log.appendedPosition(), agent.commitPosition(), log.startPosition(),
            null == snapshots ? -1 : snapshots.durablePosition(),
            null == serviceHooks ? -1 : serviceHooks.appliedPosition(),
            null == serviceHooks ? 0 : serviceHooks.stateHash());
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

    private void reply(final int endpoint, final long correlationId, final AppendStatus status, final long position)
    {
        publisher.clientAppendAck(endpoint, correlationId, status, position, agent.leaderId());
    }
}
