package io.lockstep.consensus.service;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.consensus.log.MessageHeaderEncoder;
import io.lockstep.consensus.log.NewLeadershipTermEncoder;
import io.lockstep.consensus.log.SessionCloseEncoder;
import io.lockstep.consensus.log.SessionMessageEncoder;
import io.lockstep.consensus.log.SessionOpenEncoder;
import io.lockstep.consensus.log.TimerEventEncoder;
import io.lockstep.simulation.SimLog;
import org.agrona.DirectBuffer;
import org.agrona.SemanticVersion;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ServiceContainerTest
{
    private final SimLog log = new SimLog(1 << 20);
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[256]);
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private long time = 1_000;

    /** Records every callback it sees with log time; echoes messages; "t" schedules a timer, "c" closes. */
    private static class RecordingService implements ClusteredService
    {
        final List<String> events = new ArrayList<>();
        Cluster cluster;

        public void onStart(final Cluster cluster, final SnapshotReader snapshot)
        {
            this.cluster = cluster;
            events.add("start");
        }

        public void onSessionOpen(final ClientSession session, final long timestamp)
        {
            events.add("open " + session.id() + " " + session.principal() + " @" + timestamp);
        }

        public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
        {
            events.add("close " + session.id() + " " + reason + " @" + timestamp);
        }

        public void onSessionMessage(
            final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
            final String text = buffer.getStringWithoutLengthAscii(offset, length);
            events.add("message " + session.id() + " " + text + " @" + timestamp + " pos " + cluster.logPosition());
            session.offer(buffer, offset, length);
            if (text.equals("t"))
            {
                cluster.scheduleTimer(42, timestamp + 100);
            }
            else if (text.equals("c"))
            {
                cluster.closeClientSession(session.id());
            }
        }

        public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
        }

        public void onTimerEvent(final long correlationId, final long timestamp)
        {
            events.add("timer " + correlationId + " @" + timestamp);
        }

        public void onTakeSnapshot(final SnapshotWriter writer)
        {
        }

        public void onRoleChange(final ClusterRole newRole)
        {
            events.add("role " + newRole);
        }

        public void onTerminate(final Cluster cluster)
        {
        }
    }

    /** What a leader would send: egress, acks, and requests to append. */
    private static final class RecordingOutbox implements ServiceContainer.Outbox
    {
        final List<String> sent = new ArrayList<>();

        public void onSessionOpened(final long sessionId, final long correlationId, final int leaderEndpoint)
        {
            sent.add("opened " + sessionId + " for " + correlationId);
        }

        public void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
            final int length)
        {
            sent.add("egress " + sessionId + "#" + sequence + " " + buffer.getStringWithoutLengthAscii(offset, length));
        }

        public void onIngressApplied(final long sessionId, final long appliedSequence)
        {
            sent.add("ack " + sessionId + " " + appliedSequence);
        }

        public void onSessionClosed(final long sessionId, final CloseReason reason)
        {
            sent.add("closed " + sessionId + " " + reason);
        }

        public void onCloseRequested(final long sessionId)
        {
            sent.add("close requested " + sessionId);
        }
    }

    @Test
    void eachIngressSequenceIsAppliedOnceAndTimersFireAsEntries()
    {
        writeLog();
        final RecordingService service = new RecordingService();
        final RecordingOutbox outbox = new RecordingOutbox();
        final ServiceContainer container = container(service, outbox);
        while (container.apply(log.appendedPosition(), 256) > 0)
        {
        }
        assertEquals(log.appendedPosition(), container.appliedPosition());
        assertEquals(List.of(
            "start",
            "open 1 alice @1001",
            "message 1 a @1002 pos 192",
            "message 1 t @1005 pos 480",
            "timer 42 @1107",
            "message 1 c @1108 pos 704",
            "close 1 SERVICE_ACTION @1109"), service.events);
        assertEquals(List.of(
            "opened 1 for 77",
            "egress 1#0 a", "ack 1 0",
            "ack 1 0",
            "egress 1#1 t", "ack 1 1",
            "egress 1#2 c", "close requested 1", "ack 1 2",
            "closed 1 SERVICE_ACTION"), outbox.sent,
            "the retry of 0 is acknowledged, not applied; 3 before 2 is dropped; the stale timer event is ignored");
    }

    @Test
    void theSameLogReplayedIntoTwoContainersGivesTheSameStateAndEgress()
    {
        writeLog();
        final RecordingService first = new RecordingService();
        final RecordingService second = new RecordingService();
        final RecordingOutbox firstOut = new RecordingOutbox();
        final RecordingOutbox secondOut = new RecordingOutbox();
        final ServiceContainer a = container(first, firstOut);
        final ServiceContainer b = container(second, secondOut);
        // Different batch sizes: how the log is read must not matter.
        while (a.apply(log.appendedPosition(), 64) > 0)
        {
        }
        while (b.apply(log.appendedPosition(), 4096) > 0)
        {
        }
        assertEquals(first.events, second.events);
        assertEquals(firstOut.sent, secondOut.sent);
        assertEquals(a.stateHash(), b.stateHash());
    }

    @Test
    void nothingBeyondTheCommitPositionIsApplied()
    {
        writeLog();
        final RecordingService service = new RecordingService();
        final ServiceContainer container = container(service, new RecordingOutbox());
        final long commit = 192;
        while (container.apply(commit, 4096) > 0)
        {
        }
        assertEquals(commit, container.appliedPosition());
        assertEquals("message 1 a @1002 pos 192", service.events.get(service.events.size() - 1));
    }

    @Test
    void entriesWrittenByAnotherMajorVersionAreRefusedNamingBothVersions()
    {
        appendNewTerm(SemanticVersion.compose(1, 2, 0));
        writeLog();
        final ServiceContainer sameMajor = container(new VersionedService(1, 4, 0), new RecordingOutbox());
        while (sameMajor.apply(log.appendedPosition(), 4096) > 0)
        {
        }
        assertEquals(log.appendedPosition(), sameMajor.appliedPosition(), "1.2.0 entries apply on 1.4.0");

        appendNewTerm(SemanticVersion.compose(2, 0, 0));
        log.flush();
        final ServiceContainer older = container(new VersionedService(1, 4, 0), new RecordingOutbox());
        final IllegalStateException refused = Assertions.assertThrows(
            IllegalStateException.class, () ->
            {
                while (older.apply(log.appendedPosition(), 4096) > 0)
                {
                }
            });
        assertTrue(refused.getMessage().contains("written by application version 2.0.0") &&
            refused.getMessage().contains("this member runs 1.4.0"), refused.getMessage());
    }

    /** The recording service at a version of its own. */
    private static final class VersionedService extends RecordingService
    {
        private final int version;

        VersionedService(final int major, final int minor, final int patch)
        {
            version = SemanticVersion.compose(major, minor, patch);
        }

        public int appVersion()
        {
            return version;
        }
    }

    private void appendNewTerm(final int appVersion)
    {
        append(NewLeadershipTermEncoder.TEMPLATE_ID,
            new NewLeadershipTermEncoder().wrapAndApplyHeader(scratch, 0, header)
                .timestamp(++time).term(1).leaderId(0).appVersion(appVersion).encodedLength());
    }

    private ServiceContainer container(final RecordingService service, final RecordingOutbox outbox)
    {
        final ServiceContainer container = new ServiceContainer(0, service, log, 0, new SessionTable(10, 1024),
            new TimerTable(10), outbox, new NoOpIdleStrategy());
        container.start(null);
        return container;
    }

    private void writeLog()
    {
        append(SessionOpenEncoder.TEMPLATE_ID, new SessionOpenEncoder().wrapAndApplyHeader(scratch, 0, header)
            .timestamp(++time).correlationId(77).leaderEndpoint(5).principal("alice").encodedLength());
        message(1, 0, "a");
        message(1, 0, "a");          // a client's retry after failover: a duplicate
        message(1, 3, "x");          // ingress 2 lost before the log: out of order, dropped
        message(1, 1, "t");
        timer(99);                   // never scheduled: stale, ignored
        timer(42);
        message(1, 2, "c");
        append(SessionCloseEncoder.TEMPLATE_ID, new SessionCloseEncoder().wrapAndApplyHeader(scratch, 0, header)
            .timestamp(++time).sessionId(1).reason(io.lockstep.consensus.log.CloseReason.SERVICE_ACTION)
            .encodedLength());
        message(1, 3, "late");       // after close: unknown session
        log.flush();
    }

    private void message(final long sessionId, final long sequence, final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        append(SessionMessageEncoder.TEMPLATE_ID, new SessionMessageEncoder().wrapAndApplyHeader(scratch, 0, header)
            .timestamp(++time).sessionId(sessionId).sequence(sequence).putPayload(bytes, 0, bytes.length)
            .encodedLength());
    }

    private void timer(final long correlationId)
    {
        // Timer 42 was scheduled at log time 1005 for +100: the leader fires it once that has passed.
        time += correlationId == 42 ? 100 : 0;
        append(TimerEventEncoder.TEMPLATE_ID, new TimerEventEncoder().wrapAndApplyHeader(scratch, 0, header)
            .timestamp(++time).correlationId(correlationId).deadline(correlationId == 42 ? 1105 : 0).encodedLength());
    }

    private void append(final int type, final int bodyLength)
    {
        log.append(1, type, scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH + bodyLength);
    }
}
