package io.lockstep.consensus;

import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.transport.DecoderFaults;
import io.lockstep.cluster.transport.MessageShapes;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;

import java.nio.ByteOrder;

/**
 * The member's door for inbound messages: checks the header, sends client-protocol messages to the session ingress,
 * refuses untrusted tool connections, and routes each member-protocol message by kind to the one handler of that
 * kind ({@link PeerMessageHandler} for what members say to each other, {@link ToolRequestHandler} for the tool's
 * requests). A message enters one handler and leaves.
 */
final class MemberProtocolAdapter implements Transport.MessageHandler
{
    /** Only to tell a codec's exception from the member's own. */
    private static final MessageShapes SHAPES = MemberProtocolShapes.create();

    private final ConsensusAgent agent;
    private final Transport transport;
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final InboundMessage message = new InboundMessage();
    private final PeerMessageHandler peerMessages;
    private final ToolRequestHandler toolRequests;

    MemberProtocolAdapter(
        final ConsensusAgent agent, final Transport transport, final StandbyRelay relay, final AdminRequests admin,
        final ClusterFormation formation, final OwedFrames owedFrames)
    {
        this.agent = agent;
        this.transport = transport;
        this.peerMessages = new PeerMessageHandler(agent, relay, formation, owedFrames);
        this.toolRequests = new ToolRequestHandler(admin);
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
            dropMalformed(from, "block length " + header.blockLength() + " runs past its " + length + " bytes");
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
                if (DecoderFaults.isDecoderFault(ex, SHAPES))
                {
                    agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
                    throw ex;
                }
                dropMalformed(from, ex.toString());
            }
            return;
        }
        dispatch(from, buffer, offset, length);
    }

    private static String endpointName(final int endpoint)
    {
        return endpoint >= Transport.CLIENT_ENDPOINT_BASE ? "client connection " + endpoint : "member " + endpoint;
    }

    private void dispatch(final int from, final DirectBuffer buffer, final int offset, final int length)
    {
        // The client protocol (sessions, ingress) has its own schema; every one of its decoders names it.
        if (header.schemaId() == IngressDecoder.SCHEMA_ID)
        {
            agent.onClientProtocol(from, buffer, offset, length);
            return;
        }
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID
            || header.version() > MessageHeaderDecoder.SCHEMA_VERSION)
        {
            if (from >= Transport.CLIENT_ENDPOINT_BASE)
            {
                // Anyone can send this as a client: counted, not logged, so that it cannot crowd out members' lines.
                agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
                return;
            }
            agent.peerProblems().report("version", "dropped a message from " + endpointName(from) + ": schema " +
                header.schemaId() + " version " + header.version() + ", where this member reads schema " +
                MessageHeaderDecoder.SCHEMA_ID + " up to version " + MessageHeaderDecoder.SCHEMA_VERSION);
            return;
        }
        final InboundMessage m = message.set(buffer, offset, length, header);
        final boolean fromMember = from < Transport.CLIENT_ENDPOINT_BASE;
        if (!fromMember && !transport.isTrusted(from))
        {
            // Every tool request starts with its correlation id: the refusal names the request it answers.
            final long correlationId = m.blockLength >= Long.BYTES && m.body + Long.BYTES <= m.end() ?
                buffer.getLong(m.body, ByteOrder.LITTLE_ENDIAN) : -1;
            agent.admin().refuseUntrusted(from, correlationId, header.templateId());
            return;
        }
        final int templateId = header.templateId();
        if (!peerMessages.onMessage(templateId, from, fromMember, m) && !toolRequests.onMessage(templateId, from, m))
        {
            if (fromMember)
            {
                dropMalformed(from, "unknown template " + templateId);
            }
            else
            {
                // Anyone can send this as a client: counted, not recorded, as an unknown schema above.
                agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
            }
        }
    }

    /**
     * Count a dropped message and say why: a member's through the bounded peer-problem log, a client's (one whose
     * header lies about its length, or whose request failed other than in its decoder) in {@code tool errors} only,
     * where a flood of one shape takes one entry.
     */
    private void dropMalformed(final int from, final String why)
    {
        agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
        final String message = "dropped a message from " + endpointName(from) + ": " + why;
        if (from < Transport.CLIENT_ENDPOINT_BASE)
        {
            agent.peerProblems().report("malformed", message);
        }
        else
        {
            agent.errors().record("malformed", message);
        }
    }
}
