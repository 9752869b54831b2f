package io.lockstep.consensus;

import io.lockstep.cluster.transport.DecoderFaults;
import io.lockstep.cluster.transport.MessageShapes;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendRequestDecoder;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.BackupRequestDecoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ClientAppendDecoder;
import io.lockstep.consensus.codecs.ConfigurationNoticeDecoder;
import io.lockstep.consensus.codecs.ErrorsRequestDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.MembershipChangeRequestDecoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.PromoteRequestDecoder;
import io.lockstep.consensus.codecs.RequestVoteDecoder;
import io.lockstep.consensus.codecs.ShutdownRequestDecoder;
import io.lockstep.consensus.codecs.SnapshotRequestDecoder;
import io.lockstep.consensus.codecs.StatusRequestDecoder;
import io.lockstep.consensus.codecs.SuspendRequestDecoder;
import io.lockstep.consensus.codecs.TimeoutNowDecoder;
import io.lockstep.consensus.codecs.TransferLeadershipDecoder;
import io.lockstep.consensus.codecs.VoteDecoder;
import org.agrona.DirectBuffer;

import java.nio.ByteOrder;

/**
 * Decodes inbound messages with flyweights and calls the matching handler on the consensus agent. Member-only
 * messages from a client endpoint, and client messages from members, are dropped: a tool cannot cast votes.
 */
final class MemberProtocolAdapter implements Transport.MessageHandler
{
    private static final System.Logger LOGGER = System.getLogger(MemberProtocolAdapter.class.getName());
    /** Only to tell a codec's exception from the member's own. */
    private static final MessageShapes SHAPES = MemberProtocolShapes.create();

    private final ConsensusAgent agent;
    /** The standby that feeds the others ({@link ConsensusConfig#relay}), or -1. */
    private final int relay;
    private final Transport transport;
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final RequestVoteDecoder requestVote = new RequestVoteDecoder();
    private final VoteDecoder vote = new VoteDecoder();
    private final AppendRequestDecoder appendRequest = new AppendRequestDecoder();
    private final AppendResponseDecoder appendResponse = new AppendResponseDecoder();
    private final TimeoutNowDecoder timeoutNow = new TimeoutNowDecoder();
    private final ClientAppendDecoder clientAppend = new ClientAppendDecoder();
    private final StatusRequestDecoder statusRequest = new StatusRequestDecoder();
    private final TransferLeadershipDecoder transferLeadership = new TransferLeadershipDecoder();
    private final InstallSnapshotDecoder installSnapshot =
        new InstallSnapshotDecoder();
    private final InstallSnapshotResponseDecoder installSnapshotResponse =
        new InstallSnapshotResponseDecoder();
    private final SnapshotRequestDecoder snapshotRequest =
        new SnapshotRequestDecoder();
    private final ShutdownRequestDecoder shutdownRequest =
        new ShutdownRequestDecoder();

    private final SuspendRequestDecoder suspendRequest =
        new SuspendRequestDecoder();

    private final BackupRequestDecoder backupRequest =
        new BackupRequestDecoder();

    private final ConfigurationNoticeDecoder configurationNotice =
        new ConfigurationNoticeDecoder();
    private final MembershipChangeRequestDecoder changeRequest =
        new MembershipChangeRequestDecoder();
    private final PromoteRequestDecoder promoteRequest =
        new PromoteRequestDecoder();

    MemberProtocolAdapter(final ConsensusAgent agent, final Transport transport, final int relay)
    {
        this.agent = agent;
        this.transport = transport;
        this.relay = relay;
    }

    public void onMessage(final int from, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return;
        }
        header.wrap(buffer, offset);
        if (MessageHeaderDecoder.ENCODED_LENGTH + header.blockLength() > length)
        {
            agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
            agent.errors().record("malformed", "dropped a message from " + endpointName(from) + ": block length " +
                header.blockLength() + " runs past its " + length + " bytes");
            return;
        }
        if (from >= Transport.CLIENT_ENDPOINT_BASE)
        {
            // Anyone can reach a member as a client. A decoder that throws on a client's message goes on up, so
            // that the transport closes that connection; anything else a client's request makes fail drops that
            // request, never the member.
            try
            {
                dispatch(from, buffer, offset, length);
            }
            catch (final RuntimeException ex)
            {
                agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
                if (DecoderFaults.isDecoderFault(ex, SHAPES))
                {
                    throw ex;
                }
                agent.errors().record("malformed", "dropped a message from " + endpointName(from) + ": " + ex);
            }
            return;
        }
        dispatch(from, buffer, offset, length);
    }

    /**
     * The relay standby passes each append its leader sent it, as received, to the other standbys: one copy of the
     * stream crosses the zone link. They answer the leader directly.
     */
    private void forwardToStandbys(
        final int from, final int leaderId, final DirectBuffer buffer, final int offset, final int length)
    {
        final int self = agent.memberId();
        if (relay != self || from != leaderId || !agent.membership().isLearner(self))
        {
            return;
        }
        for (long rest = agent.membership().learners() & ~(1L << self); rest != 0; rest &= rest - 1)
        {
            transport.send(Long.numberOfTrailingZeros(rest), buffer, offset, length);
        }
    }

    /**
     * After the handshake a connection's member id is fixed: a member message whose sender field names another
     * member is dropped, so that one member (or whoever holds its credentials) cannot vote, acknowledge or announce a
     * configuration in another's name.
     */
    private boolean isSender(final int from, final int claimed, final String what)
    {
        if (claimed == from)
        {
            return true;
        }
        agent.metrics().increment(MemberMetrics.FORGED_SENDERS);
        agent.errors().record("forged sender", "dropped " + what + " from member " + from + " that names member " +
            claimed + " as its sender");
        return false;
    }

    /** The leader, or for a standby the relay standby, which passes the leader's appends on as they came. */
    private boolean isAppendSender(final int from, final int leaderId)
    {
        return from == relay && from != agent.memberId() && agent.membership().isLearner(agent.memberId()) ||
            isSender(from, leaderId, "an append");
    }

    private static String endpointName(final int endpoint)
    {
        return endpoint >= Transport.CLIENT_ENDPOINT_BASE ? "client connection " + endpoint : "member " + endpoint;
    }

    private void dispatch(final int from, final DirectBuffer buffer, final int offset, final int length)
    {
        if (header.schemaId() == io.lockstep.cluster.codecs.MessageHeaderDecoder.SCHEMA_ID)
        {
            agent.onClientProtocol(from, buffer, offset, length);
            return;
        }
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID
            || header.version() > MessageHeaderDecoder.SCHEMA_VERSION)
        {
            LOGGER.log(System.Logger.Level.WARNING, "dropped message from {0}: schema {1} version {2}",
                from, header.schemaId(), header.version());
            return;
        }
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        final int blockLength = header.blockLength();
        final int version = header.version();
        final boolean fromMember = from < Transport.CLIENT_ENDPOINT_BASE;
        if (!fromMember && !transport.isTrusted(from))
        {
            // Every tool request starts with its correlation id: the refusal names the request it answers.
            final long correlationId = blockLength >= Long.BYTES && body + Long.BYTES <= offset + length ?
                buffer.getLong(body, ByteOrder.LITTLE_ENDIAN) : -1;
            agent.admin().refuseUntrusted(from, correlationId, header.templateId());
            return;
        }
        switch (header.templateId())
        {
            case RequestVoteDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    requestVote.wrap(buffer, body, blockLength, version);
                    if (!isSender(from, requestVote.candidateId(), "a vote request") ||
                        !agent.membershipExchange().admit(from, requestVote.configEpoch()))
                    {
                        break;
                    }
                    agent.onRequestVote(requestVote.term(), requestVote.candidateId(), requestVote.lastLogTerm(),
                        requestVote.lastLogPosition(), BooleanType.TRUE == requestVote.preVote(),
                        BooleanType.TRUE == requestVote.transfer());
                }
                break;

            case VoteDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    vote.wrap(buffer, body, blockLength, version);
                    if (!isSender(from, vote.voterId(), "a vote") ||
                        !agent.membershipExchange().admit(from, vote.configEpoch()))
                    {
                        break;
                    }
                    agent.onVote(vote.term(), vote.voterId(), vote.candidateTerm(), BooleanType.TRUE == vote.granted(),
                        BooleanType.TRUE == vote.preVote());
                }
                break;

            case AppendRequestDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    appendRequest.wrap(buffer, body, blockLength, version);
                    if (!isAppendSender(from, appendRequest.leaderId()) ||
                        !agent.membershipExchange().admit(from, appendRequest.configEpoch()))
                    {
                        break;
                    }
                    final long term = appendRequest.term();
                    final int leaderId = appendRequest.leaderId();
                    final long sequence = appendRequest.sequence();
                    final long prevPosition = appendRequest.prevPosition();
                    final long prevTerm = appendRequest.prevTerm();
                    final long commitPosition = appendRequest.commitPosition();
                    final int bytesLength = appendRequest.logBytesLength();
                    final int bytesOffset = appendRequest.limit() + AppendRequestDecoder.logBytesHeaderLength();
                    if (bytesOffset + bytesLength > offset + length)
                    {
                        LOGGER.log(System.Logger.Level.WARNING, "dropped truncated append request from {0}", from);
                        return;
                    }
                    agent.onAppendRequest(term, leaderId, sequence, prevPosition, prevTerm, commitPosition, buffer,
                        bytesOffset, bytesLength);
                    forwardToStandbys(from, leaderId, buffer, offset, length);
                }
                break;

            case AppendResponseDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    appendResponse.wrap(buffer, body, blockLength, version);
                    if (isSender(from, appendResponse.followerId(), "an append response") &&
                        agent.membershipExchange().admit(from, appendResponse.configEpoch()))
                    {
                        agent.onAppendResponse(appendResponse);
                    }
                }
                break;

            case TimeoutNowDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    timeoutNow.wrap(buffer, body, blockLength, version);
                    if (isSender(from, timeoutNow.leaderId(), "a leadership transfer"))
                    {
                        agent.onTimeoutNow(timeoutNow.term(), timeoutNow.leaderId());
                    }
                }
                break;

            case InstallSnapshotDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    installSnapshot.wrap(buffer, body, blockLength, version);
                    if (!isSender(from, installSnapshot.leaderId(), "a snapshot chunk") ||
                        !agent.membershipExchange().admit(from, installSnapshot.configEpoch()))
                    {
                        break;
                    }
                    // The leader's committed configuration: what the snapshot's purged log no longer carries.
                    agent.membership().onSnapshotConfiguration(installSnapshot.configEpoch(),
                        installSnapshot.configVersion(), installSnapshot.voters(), installSnapshot.learners());
                    final long term = installSnapshot.term();
                    final int leaderId = installSnapshot.leaderId();
                    final long snapshotPosition = installSnapshot.snapshotPosition();
                    final long snapshotTerm = installSnapshot.snapshotTerm();
                    final long chunkOffset = installSnapshot.chunkOffset();
                    final long totalLength = installSnapshot.totalLength();
                    final int chunkLength = installSnapshot.chunkLength();
                    final int bytesOffset = installSnapshot.limit() +
                        InstallSnapshotDecoder.chunkHeaderLength();
                    if (bytesOffset + chunkLength > offset + length || chunkOffset < 0 || totalLength < 0 ||
                        chunkOffset + chunkLength > totalLength)
                    {
                        LOGGER.log(System.Logger.Level.WARNING, "dropped malformed snapshot chunk from {0}", from);
                        return;
                    }
                    agent.onInstallSnapshot(term, leaderId, snapshotPosition, snapshotTerm, chunkOffset, totalLength,
                        buffer, bytesOffset, chunkLength);
                }
                break;

            case InstallSnapshotResponseDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    installSnapshotResponse.wrap(buffer, body, blockLength, version);
                    if (!isSender(from, installSnapshotResponse.followerId(), "a snapshot response") ||
                        !agent.membershipExchange().admit(from, installSnapshotResponse.configEpoch()))
                    {
                        break;
                    }
                    agent.onInstallSnapshotResponse(installSnapshotResponse.term(),
                        installSnapshotResponse.followerId(),
                        installSnapshotResponse.snapshotPosition(), installSnapshotResponse.nextOffset(),
                        BooleanType.TRUE == installSnapshotResponse.installed());
                }
                break;

            case ConfigurationNoticeDecoder.TEMPLATE_ID:
                if (fromMember)
                {
                    configurationNotice.wrap(buffer, body, blockLength, version);
                    if (!isSender(from, configurationNotice.memberId(), "a configuration notice"))
                    {
                        break;
                    }
                    agent.membershipExchange().onNotice(from, configurationNotice.configEpoch(),
                        configurationNotice.configVersion(), configurationNotice.voters(),
                        configurationNotice.learners());
                }
                break;

            case MembershipChangeRequestDecoder.TEMPLATE_ID:
                changeRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onMembershipChange(from, changeRequest.correlationId(), changeRequest.action(),
                    changeRequest.memberId());
                break;

            case PromoteRequestDecoder.TEMPLATE_ID:
                promoteRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onPromoteRequest(from, promoteRequest.correlationId(),
                    BooleanType.TRUE.value() == promoteRequest.checkRaw(), promoteRequest.configEpoch(),
                    promoteRequest.voters(), promoteRequest.learners());
                break;

            case SnapshotRequestDecoder.TEMPLATE_ID:
                snapshotRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onSnapshotRequest(from, snapshotRequest.correlationId());
                break;
            case ShutdownRequestDecoder.TEMPLATE_ID:
                shutdownRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onShutdownRequest(from, shutdownRequest.correlationId());
                break;

            case ClientAppendDecoder.TEMPLATE_ID:
                clientAppend.wrap(buffer, body, blockLength, version);
                final long correlationId = clientAppend.correlationId();
                final int payloadLength = clientAppend.payloadLength();
                final int payloadOffset = clientAppend.limit() + ClientAppendDecoder.payloadHeaderLength();
                if (payloadOffset + payloadLength > offset + length)
                {
                    return;
                }
                agent.admin().onClientAppend(from, correlationId, buffer, payloadOffset, payloadLength);
                break;

            case SuspendRequestDecoder.TEMPLATE_ID:
                suspendRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onSuspendRequest(from, suspendRequest.correlationId(),
                    BooleanType.TRUE.value() == suspendRequest.suspendRaw());
                break;

            case BackupRequestDecoder.TEMPLATE_ID:
                backupRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onBackupRequest(from, backupRequest.correlationId(),
                    BooleanType.TRUE.value() == backupRequest.logRaw(), backupRequest.snapshotPosition(),
                    backupRequest.from(), backupRequest.limitPosition());
                break;

            case ErrorsRequestDecoder.TEMPLATE_ID:
                agent.admin().onErrorsRequest(from, buffer.getLong(body, ByteOrder.LITTLE_ENDIAN));
                break;

            case StatusRequestDecoder.TEMPLATE_ID:
                statusRequest.wrap(buffer, body, blockLength, version);
                agent.admin().onStatusRequest(from, statusRequest.correlationId());
                break;

            case TransferLeadershipDecoder.TEMPLATE_ID:
                transferLeadership.wrap(buffer, body, blockLength, version);
                agent.admin().onTransferLeadership(from, transferLeadership.correlationId(),
                    transferLeadership.targetMemberId());
                break;

            default:
                LOGGER.log(System.Logger.Level.WARNING, "dropped unknown message template {0} from {1}",
                    header.templateId(), from);
        }
    }
}
