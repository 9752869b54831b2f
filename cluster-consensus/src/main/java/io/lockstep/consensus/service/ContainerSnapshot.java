package io.lockstep.consensus.service;

import io.lockstep.cluster.SnapshotReader;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.log.ContainerSnapshotHeaderDecoder;
import io.lockstep.consensus.log.ContainerSnapshotHeaderEncoder;
import io.lockstep.consensus.log.MessageHeaderDecoder;
import io.lockstep.consensus.log.MessageHeaderEncoder;
import io.lockstep.consensus.log.ServiceMessageSnapshotDecoder;
import io.lockstep.consensus.log.ServiceMessageSnapshotEncoder;
import io.lockstep.consensus.log.SessionSnapshotDecoder;
import io.lockstep.consensus.log.SessionSnapshotEncoder;
import io.lockstep.consensus.log.TimerSnapshotDecoder;
import io.lockstep.consensus.log.TimerSnapshotEncoder;
import org.agrona.ExpandableArrayBuffer;

/**
 * The container's part of a snapshot: the session table (with each session's egress buffer, so that a client can
 * still be resent what it missed after a restart), the timers and the queued service messages. Written as SBE
 * fragments at the front of the image, before the service's own: a header with the counts, then one fragment per
 * session, timer and queued message.
 */
final class ContainerSnapshot
{
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ContainerSnapshotHeaderEncoder snapshotHeaderEncoder = new ContainerSnapshotHeaderEncoder();
    private final ContainerSnapshotHeaderDecoder snapshotHeaderDecoder = new ContainerSnapshotHeaderDecoder();
    private final SessionSnapshotEncoder sessionEncoder = new SessionSnapshotEncoder();
    private final SessionSnapshotDecoder sessionDecoder = new SessionSnapshotDecoder();
    private final TimerSnapshotEncoder timerEncoder = new TimerSnapshotEncoder();
    private final TimerSnapshotDecoder timerDecoder = new TimerSnapshotDecoder();
    private final ServiceMessageSnapshotEncoder messageEncoder = new ServiceMessageSnapshotEncoder();
    private final ServiceMessageSnapshotDecoder messageDecoder = new ServiceMessageSnapshotDecoder();
    private final ExpandableArrayBuffer scratch = new ExpandableArrayBuffer(4096);
    // Linked here, when the member starts, not inside the first snapshot's pause: the first call of a new lambda
    // spins a class (measured: 7-10 ms on every member at the first snapshot under load).
    private final TimerTable.DueTimerHandler timerWriter = this::writeTimer;
    private final ServiceMessageQueue.MessageVisitor messageWriter = this::writeMessage;
    private SnapshotImage target;

    void write(
        final SnapshotImage image,
        final SessionTable sessions,
        final TimerTable timers,
        final ServiceMessageQueue serviceMessages,
        final boolean suspended)
    {
        snapshotHeaderEncoder.wrapAndApplyHeader(scratch, 0, headerEncoder)
            .logPosition(image.logPosition())
            .term(image.term())
            .timestamp(image.timestamp())
            .nextSessionId(sessions.nextSessionId())
            .sessionCount(sessions.sessions().size())
            .timerCount(timers.size())
            .serviceMessageCount(serviceMessages.size())
            .serviceMessageNextId(serviceMessages.nextId())
            .egressCapacity(sessions.egressCapacity())
            .suspended((short)(suspended ? 1 : 0));
        image.append(scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH + snapshotHeaderEncoder.encodedLength());

        for (final SessionTable.Session session : sessions.sessions())
        {
            final EgressBuffer egress = session.egress();
            sessionEncoder.wrapAndApplyHeader(scratch, 0, headerEncoder)
                .sessionId(session.id())
                .appliedSequence(session.appliedSequence())
                .egressFirstSequence(egress.firstSequence())
                .egressNextSequence(egress.nextSequence())
                .egressHead(egress.head())
                .egressTail(egress.tail())
                .egressUsed(egress.used())
                .secretHigh(session.secret().present() ? session.secret().high() :
                    SessionSnapshotEncoder.secretHighNullValue())
                .secretLow(session.secret().present() ? session.secret().low() :
                    SessionSnapshotEncoder.secretLowNullValue())
                .putEgressRing(egress.ring(), 0, egress.ringLength())
                .principal(session.principal());
            image.append(scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH + sessionEncoder.encodedLength());
        }

        target = image;
        try
        {
            timers.forEach(timerWriter);
            serviceMessages.forEachFrom(0, messageWriter);
        }
        finally
        {
            target = null;
        }
    }

    private void writeTimer(final long correlationId, final long deadline)
    {
        timerEncoder.wrapAndApplyHeader(scratch, 0, headerEncoder).correlationId(correlationId).deadline(deadline);
        target.append(scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH + timerEncoder.encodedLength());
    }

    private boolean writeMessage(final long id, final byte[] payload)
    {
        messageEncoder.wrapAndApplyHeader(scratch, 0, headerEncoder).messageId(id).putPayload(payload, 0,
            payload.length);
        target.append(scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH + messageEncoder.encodedLength());
        return true;
    }

    /**
     * Restore into empty tables from the image's front; the reader is left at the service's first fragment.
     *
     * @return true if the cluster was suspended at the snapshot.
     * @throws IllegalStateException naming what does not fit (a snapshot from a member with other bounds).
     */
    // Longer than the method bound: the image's sections in the order write() puts them down, so the two read side by
    // side.
    @SuppressWarnings("checkstyle:MethodLength")
    boolean read(
        final SnapshotReader reader,
        final SessionTable sessions,
        final TimerTable timers,
        final ServiceMessageQueue serviceMessages)
    {
        final int[] counts = new int[4];
        reader.readOne((buffer, offset, length) ->
        {
            headerDecoder.wrap(buffer, offset);
            expect(ContainerSnapshotHeaderDecoder.TEMPLATE_ID);
            snapshotHeaderDecoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH,
                headerDecoder.blockLength(),
                headerDecoder.version());
            if (snapshotHeaderDecoder.egressCapacity() != sessions.egressCapacity())
            {
                throw new IllegalStateException("snapshot was taken with egress buffers of " +
                    snapshotHeaderDecoder.egressCapacity() + " bytes; this member keeps " + sessions.egressCapacity());
            }
            sessions.restoreNextSessionId(snapshotHeaderDecoder.nextSessionId());
            serviceMessages.restoreNextId(snapshotHeaderDecoder.serviceMessageNextId());
            counts[0] = snapshotHeaderDecoder.sessionCount();
            counts[1] = snapshotHeaderDecoder.timerCount();
            counts[2] = snapshotHeaderDecoder.serviceMessageCount();
            counts[3] = 1 == snapshotHeaderDecoder.suspended() ? 1 : 0;
        });
        for (int i = 0; i < counts[0]; i++)
        {
            reader.readOne((buffer, offset, length) ->
            {
                headerDecoder.wrap(buffer, offset);
                expect(SessionSnapshotDecoder.TEMPLATE_ID);
                sessionDecoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                    headerDecoder.version());
                final long sessionId = sessionDecoder.sessionId();
                final long applied = sessionDecoder.appliedSequence();
                final long first = sessionDecoder.egressFirstSequence();
                final long next = sessionDecoder.egressNextSequence();
                final int head = sessionDecoder.egressHead();
                final int tail = sessionDecoder.egressTail();
                final int used = sessionDecoder.egressUsed();
                final long secretHigh = sessionDecoder.secretHigh();
                final long secretLow = sessionDecoder.secretLow();
                // Absent before version 4, and written as the null values for a session from before then.
                final SessionSecret secret =
                    sessionDecoder.actingVersion() < SessionSnapshotDecoder.secretHighSinceVersion() ||
                    secretHigh == SessionSnapshotDecoder.secretHighNullValue() &&
                    secretLow == SessionSnapshotDecoder.secretLowNullValue() ? SessionSecret.NONE :
                    new SessionSecret(secretHigh, secretLow, true);
                final int ringLength = sessionDecoder.egressRingLength();
                final int ringOffset = sessionDecoder.limit() + SessionSnapshotDecoder.egressRingHeaderLength();
                sessionDecoder.skipEgressRing();
                final SessionTable.Session session = sessions.restore(sessionId, applied, sessionDecoder.principal(),
                    secret);
                session.egress().restore(first, next, head, tail, used, buffer, ringOffset, ringLength);
            });
        }
        for (int i = 0; i < counts[1]; i++)
        {
            reader.readOne((buffer, offset, length) ->
            {
                headerDecoder.wrap(buffer, offset);
                expect(TimerSnapshotDecoder.TEMPLATE_ID);
                timerDecoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                    headerDecoder.version());
                if (!timers.schedule(timerDecoder.correlationId(), timerDecoder.deadline()))
                {
                    throw new IllegalStateException("snapshot holds more timers than this member's bound");
                }
            });
        }
        for (int i = 0; i < counts[2]; i++)
        {
            reader.readOne((buffer, offset, length) ->
            {
                headerDecoder.wrap(buffer, offset);
                expect(ServiceMessageSnapshotDecoder.TEMPLATE_ID);
                messageDecoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                    headerDecoder.version());
                final long id = messageDecoder.messageId();
                final int payloadLength = messageDecoder.payloadLength();
                final int payloadOffset = messageDecoder.limit() + ServiceMessageSnapshotDecoder.payloadHeaderLength();
                serviceMessages.restoreMessage(id, buffer, payloadOffset, payloadLength);
            });
        }
        return 1 == counts[3];
    }

    private void expect(final int templateId)
    {
        if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID || headerDecoder.templateId() != templateId)
        {
            throw new IllegalStateException("snapshot fragment is schema " + headerDecoder.schemaId() + " template " +
                headerDecoder.templateId() + ", expected container template " + templateId);
        }
    }

}
