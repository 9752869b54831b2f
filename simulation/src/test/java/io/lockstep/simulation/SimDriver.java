package io.lockstep.simulation;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.ClientAppendAckDecoder;
import io.lockstep.consensus.codecs.ClientAppendEncoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.TransferLeadershipEncoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Random;

/**
 * A client that appends entries through whichever member it thinks leads, following redirects. Every payload holds
 * its correlation id, so the simulation can find each acknowledged entry in the committed log.
 */
final class SimDriver
{
    static final int PAYLOAD_LENGTH = 40;

    private final Transport transport;
    private final Random random;
    private final int[] memberIds;
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
    private final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD_LENGTH]);
    private final ClientAppendEncoder encoder = new ClientAppendEncoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ClientAppendAckDecoder ackDecoder = new ClientAppendAckDecoder();
    /** correlation id -> position after the entry, for every acknowledged append. */
    final Long2LongHashMap acked = new Long2LongHashMap(-1);
    private final Long2LongHashMap outstanding = new Long2LongHashMap(-1);
    private int target;
    private long nextCorrelationId = 1;
    long sent;

    SimDriver(final Transport transport, final Random random, final int[] memberIds)
    {
        this.transport = transport;
        this.random = random;
        this.memberIds = memberIds;
        this.target = memberIds[0];
    }

    void doWork(final long nowNs, final boolean sendNew)
    {
        transport.poll(nowNs, this::onMessage);
        // An ack can be lost with its leader: after a while the outcome is unknown and the slot is reused.
        outstanding.entrySet().removeIf(e -> nowNs - e.getValue() > 1_000_000_000L);
        if (sendNew && outstanding.size() < 8)
        {
            final long correlationId = nextCorrelationId++;
            payload.putLong(0, correlationId);
            for (int i = 8; i < PAYLOAD_LENGTH; i++)
            {
                payload.putByte(i, (byte)(correlationId * 31 + i));
            }
            encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
                .correlationId(correlationId)
                .putPayload(payload, 0, PAYLOAD_LENGTH);
            if (transport.send(target, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()))
            {
                outstanding.put(correlationId, nowNs);
                sent++;
            }
            else
            {
                target = memberIds[random.nextInt(memberIds.length)];
            }
        }
    }

    /**
     * Ask a member (the leader) to hand leadership to another.
     */
    boolean requestTransfer(final int leader, final int target)
    {
        final TransferLeadershipEncoder transfer =
            new TransferLeadershipEncoder();
        transfer.wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(-1).targetMemberId(target);
        return transport.send(leader, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + transfer.encodedLength());
    }

    private void onMessage(final int from, final DirectBuffer msg, final int offset, final int length)
    {
        headerDecoder.wrap(msg, offset);
        if (headerDecoder.templateId() != ClientAppendAckDecoder.TEMPLATE_ID)
        {
            return;
        }
        ackDecoder.wrap(msg, offset + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
            headerDecoder.version());
        final long correlationId = ackDecoder.correlationId();
        outstanding.remove(correlationId);
        if (AppendStatus.OK == ackDecoder.status())
        {
            acked.put(correlationId, ackDecoder.position());
        }
        else if (AppendStatus.NOT_LEADER == ackDecoder.status())
        {
            final int leader = ackDecoder.leaderId();
            target = leader >= 0 ? leader : memberIds[random.nextInt(memberIds.length)];
        }
    }
}
