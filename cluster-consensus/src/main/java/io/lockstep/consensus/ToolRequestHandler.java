package io.lockstep.consensus;

import io.lockstep.consensus.codecs.BackupRequestDecoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ClientAppendDecoder;
import io.lockstep.consensus.codecs.ErrorsRequestDecoder;
import io.lockstep.consensus.codecs.MembershipChangeRequestDecoder;
import io.lockstep.consensus.codecs.PromoteRequestDecoder;
import io.lockstep.consensus.codecs.ShutdownRequestDecoder;
import io.lockstep.consensus.codecs.SnapshotRequestDecoder;
import io.lockstep.consensus.codecs.StatusRequestDecoder;
import io.lockstep.consensus.codecs.SuspendRequestDecoder;
import io.lockstep.consensus.codecs.TransferLeadershipDecoder;

import java.nio.ByteOrder;

/**
 * The requests of the cluster tool and of drivers (status, append, snapshot, membership, promotion, backup...): one
 * handler per kind, each decoding with its flyweight and handing the request to {@link AdminRequests}, which
 * answers it. Only trusted connections get here: the router refuses the others first.
 */
final class ToolRequestHandler
{
    private final AdminRequests admin;
    private final MembershipChangeRequestDecoder changeRequest = new MembershipChangeRequestDecoder();
    private final PromoteRequestDecoder promoteRequest = new PromoteRequestDecoder();
    private final SnapshotRequestDecoder snapshotRequest = new SnapshotRequestDecoder();
    private final ShutdownRequestDecoder shutdownRequest = new ShutdownRequestDecoder();
    private final ClientAppendDecoder clientAppend = new ClientAppendDecoder();
    private final SuspendRequestDecoder suspendRequest = new SuspendRequestDecoder();
    private final BackupRequestDecoder backupRequest = new BackupRequestDecoder();
    private final StatusRequestDecoder statusRequest = new StatusRequestDecoder();
    private final TransferLeadershipDecoder transferLeadership = new TransferLeadershipDecoder();

    ToolRequestHandler(final AdminRequests admin)
    {
        this.admin = admin;
    }

    /** @return false if the template is not a tool request. */
    boolean onMessage(final int templateId, final int from, final InboundMessage m)
    {
        switch (templateId)
        {
            case MembershipChangeRequestDecoder.TEMPLATE_ID -> onMembershipChange(from, m);
            case PromoteRequestDecoder.TEMPLATE_ID -> onPromote(from, m);
            case SnapshotRequestDecoder.TEMPLATE_ID -> onSnapshot(from, m);
            case ShutdownRequestDecoder.TEMPLATE_ID -> onShutdown(from, m);
            case ClientAppendDecoder.TEMPLATE_ID -> onClientAppend(from, m);
            case SuspendRequestDecoder.TEMPLATE_ID -> onSuspend(from, m);
            case BackupRequestDecoder.TEMPLATE_ID -> onBackup(from, m);
            case ErrorsRequestDecoder.TEMPLATE_ID -> admin.onErrorsRequest(from,
                m.buffer.getLong(m.body, ByteOrder.LITTLE_ENDIAN));
            case StatusRequestDecoder.TEMPLATE_ID -> onStatus(from, m);
            case TransferLeadershipDecoder.TEMPLATE_ID -> onTransferLeadership(from, m);
            default ->
            {
                return false;
            }
        }
        return true;
    }

    private void onMembershipChange(final int from, final InboundMessage m)
    {
        changeRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onMembershipChange(from, changeRequest.correlationId(), changeRequest.action(),
            changeRequest.memberId());
    }

    private void onPromote(final int from, final InboundMessage m)
    {
        final PromoteRequestDecoder r = promoteRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onPromoteRequest(from, r.correlationId(), BooleanType.TRUE.value() == r.checkRaw(), r.configEpoch(),
            r.voters(), r.learners());
    }

    private void onSnapshot(final int from, final InboundMessage m)
    {
        snapshotRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onSnapshotRequest(from, snapshotRequest.correlationId());
    }

    private void onShutdown(final int from, final InboundMessage m)
    {
        shutdownRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onShutdownRequest(from, shutdownRequest.correlationId());
    }

    private void onClientAppend(final int from, final InboundMessage m)
    {
        clientAppend.wrap(m.buffer, m.body, m.blockLength, m.version);
        final long correlationId = clientAppend.correlationId();
        final int payloadLength = clientAppend.payloadLength();
        final int payloadOffset = clientAppend.limit() + ClientAppendDecoder.payloadHeaderLength();
        if (payloadOffset + payloadLength <= m.end())
        {
            admin.onClientAppend(from, correlationId, m.buffer, payloadOffset, payloadLength);
        }
    }

    private void onSuspend(final int from, final InboundMessage m)
    {
        suspendRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onSuspendRequest(from, suspendRequest.correlationId(),
            BooleanType.TRUE.value() == suspendRequest.suspendRaw());
    }

    private void onBackup(final int from, final InboundMessage m)
    {
        final BackupRequestDecoder r = backupRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onBackupRequest(from, r.correlationId(), BooleanType.TRUE.value() == r.logRaw(), r.snapshotPosition(),
            r.from(), r.limitPosition());
    }

    private void onStatus(final int from, final InboundMessage m)
    {
        statusRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onStatusRequest(from, statusRequest.correlationId());
    }

    private void onTransferLeadership(final int from, final InboundMessage m)
    {
        transferLeadership.wrap(m.buffer, m.body, m.blockLength, m.version);
        admin.onTransferLeadership(from, transferLeadership.correlationId(), transferLeadership.targetMemberId());
    }
}
