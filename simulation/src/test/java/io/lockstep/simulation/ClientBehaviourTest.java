package io.lockstep.simulation;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.cluster.client.SessionClient;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.SessionConnectEncoder;
import io.lockstep.cluster.codecs.SessionEventDecoder;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.MemoryElectionState;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ConfigurationNoticeEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.VoteEncoder;
import io.lockstep.consensus.service.ServiceMember;
import io.lockstep.consensus.service.SessionLimits;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a client session behaves: redirect to the leader, resume on a new leader, keepalives, timeout in the cluster,
 * and the explicit event when egress it missed is no longer buffered. Three members and up to two clients on the
 * simulated network, no random faults.
 */
class ClientBehaviourTest
{
    private static final long SESSION_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(300);
    private static final int EGRESS_BUFFER = 4096;
    /** An endpoint that speaks raw client protocol, as anyone on the network can. */
    private static final int IMPOSTOR = Transport.CLIENT_ENDPOINT_BASE + 2;

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    /** Echoes; a message "flood" sends 100 egress messages to every session. Records closes with their reason. */
    static final class FloodService implements ClusteredService
    {
        final List<String> closes = new ArrayList<>();
        final List<Long> applied = new ArrayList<>();
        final List<String> timers = new ArrayList<>();
        Cluster cluster;

        public void onStart(final Cluster cluster, final SnapshotReader snapshot)
        {
            this.cluster = cluster;
        }

        public void onSessionOpen(final ClientSession session, final long timestamp)
        {
        }

        public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
        {
            closes.add(session.id() + " " + reason);
        }

        public void onSessionMessage(
            final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
            applied.add(buffer.getLong(offset));
            if (buffer.getLong(offset) == -2)
            {
                cluster.scheduleTimer(99, timestamp + TimeUnit.MILLISECONDS.toNanos(50));
            }
            else if (buffer.getLong(offset) == -1)
            {
                final UnsafeBuffer filler = new UnsafeBuffer(new byte[100]);
                for (int i = 0; i < 100; i++)
                {
                    cluster.forEachClientSession(s -> s.offer(filler, 0, 100));
                }
            }
            else
            {
                session.offer(buffer, offset, length);
            }
        }

        public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
        }

        public void onTimerEvent(final long correlationId, final long timestamp)
        {
            timers.add(correlationId + " at " + cluster.logPosition());
        }

        public void onTakeSnapshot(final SnapshotWriter writer)
        {
        }

        public void onRoleChange(final ClusterRole newRole)
        {
        }

        public void onTerminate(final Cluster cluster)
        {
        }
    }

    private static final class Recorder implements SessionClient.Listener
    {
        final List<Long> egress = new ArrayList<>();
        int gaps;
        boolean closed;

        public void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
            final int length)
        {
            egress.add(sequence);
        }

        public void onEgressGap(final long sessionId, final long fromSequence)
        {
            gaps++;
        }

        public void onClosed(final long sessionId)
        {
            closed = true;
        }
    }

    private final Random random = new Random(3);
    private final List<Member> members = List.of(
        new Member(0, "sim", 0, true), new Member(1, "sim", 0, true), new Member(2, "sim", 0, true));
    private final SimLog[] logs = { new SimLog(64 * 1024), new SimLog(64 * 1024), new SimLog(64 * 1024) };
    private final MemoryElectionState[] states =
        { new MemoryElectionState(), new MemoryElectionState(), new MemoryElectionState() };
    private final ServiceMember[] running = new ServiceMember[3];
    private final FloodService[] services = new FloodService[3];
    private final SimNetwork network = new SimNetwork(random,
        new int[]{ 0, 1, 2, Transport.CLIENT_ENDPOINT_BASE, Transport.CLIENT_ENDPOINT_BASE + 1, IMPOSTOR },
        TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
    private final Recorder recorderA = new Recorder();
    private final Recorder recorderB = new Recorder();
    private final SessionClient clientA = client(0, recorderA);
    private final SessionClient clientB = client(1, recorderB);
    private boolean clientAAway;
    private long nowNs = TimeUnit.SECONDS.toNanos(1);

    ClientBehaviourTest()
    {
        network.now(nowNs);
        for (int i = 0; i < 3; i++)
        {
            start(i);
        }
    }

    @Test
    void aClientAskingAFollowerIsRedirectedToTheLeader()
    {
        clientAAway = true;
        runUntil(() -> leader() >= 0 && clientB.isConnected(), "a leader");
        final int leader = leader();
        final int follower = (leader + 1) % 3;
        final Recorder recorder = new Recorder();
        // This client asks the follower first (clientA's endpoint, which has not spoken yet).
        final SessionClient client = new SessionClient(network.transportFor(Transport.CLIENT_ENDPOINT_BASE),
            new int[]{ follower, (follower + 1) % 3, (follower + 2) % 3 }, recorder, TimeUnit.MILLISECONDS.toNanos(50),
            TimeUnit.MILLISECONDS.toNanos(150), 64, 64 * 1024);
        assertEquals(follower, client.currentMember());
        for (int s = 0; s < 100_000 && !client.isConnected(); s++)
        {
            step();
            client.doWork(nowNs);
        }
        assertTrue(client.isConnected(), "session open");
        assertEquals(leader, client.currentMember(), "redirected to the leader");
        offer(client, 1);
        for (int s = 0; s < 100_000 && client.ackedSequence() < 0; s++)
        {
            step();
            client.doWork(nowNs);
        }
        assertEquals(List.of(0L), recorder.egress, "its echo arrived");
    }

    @Test
    void aResumeWithoutTheSessionSecretGetsNothingAndTheSessionStaysWithTheClientThatOpenedIt()
    {
        runUntil(() -> clientA.isConnected() && leader() >= 0, "session open");
        offer(clientA, 1);
        runUntil(() -> recorderA.egress.size() == 1, "egress buffered for the session");
        final long sessionId = clientA.sessionId();
        final Transport impostor = network.transportFor(IMPOSTOR);
        final List<String> answers = new ArrayList<>();
        final MessageHeaderDecoder header =
            new MessageHeaderDecoder();
        final SessionEventDecoder event = new SessionEventDecoder();
        // Guesses as an impostor would make them: none, zeros, and random bits; the session id is no secret.
        final long[][] guesses = { {0, 0}, {sessionId, sessionId}, {random.nextLong(), random.nextLong()} };
        for (final long[] guess : guesses)
        {
            final UnsafeBuffer out = new UnsafeBuffer(new byte[128]);
            final int length = io.lockstep.cluster.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
                new SessionConnectEncoder().wrapAndApplyHeader(out, 0,
                new io.lockstep.cluster.codecs.MessageHeaderEncoder()).correlationId(77).resumeSessionId(sessionId)
                .lastEgressSequence(-1).sessionSecretHigh(guess[0]).sessionSecretLow(guess[1])
                .putCredentials(new byte[0], 0, 0).encodedLength();
            assertTrue(impostor.send(leader(), out, 0, length));
            final int before = answers.size();
            runUntil(() ->
            {
                impostor.poll(nowNs, (from, buffer, offset, l) ->
                {
                    header.wrap(buffer, offset);
                    if (SessionEventDecoder.TEMPLATE_ID == header.templateId())
                    {
                        event.wrapAndApplyHeader(buffer, offset, header);
                        answers.add(event.code() + " " + event.detail());
                    }
                    else
                    {
                        answers.add("template " + header.templateId());
                    }
                });
                return answers.size() > before;
            }, "the impostor is answered");
        }
        for (final String answer : answers)
        {
            assertTrue(answer.startsWith("AUTHENTICATION_REJECTED session " + sessionId + ": the resume did not " +
                "present the session's secret"), answers.toString());
        }
        offer(clientA, 2);
        runUntil(() -> recorderA.egress.size() == 2 && clientA.ackedSequence() == 1, "the owner carries on");
        assertEquals(sessionId, clientA.sessionId());
        assertFalse(recorderA.closed);
    }

    @Test
    void opensPastABoundAreRefusedAtOnceWithTheBoundNamedAndOpenSessionsAreUntouched()
    {
        runUntil(() -> clientA.isConnected() && leader() >= 0, "session open");
        for (final ServiceMember member : running)
        {
            member.sessionLimits(new SessionLimits(2, 4096, 3));
        }
        final List<String> answers = new ArrayList<>();
        // Two opens a connection: the third is refused.
        for (int i = 0; i < 3; i++)
        {
            answers.add(rawOpen(i));
        }
        assertTrue(answers.get(0).startsWith("OK") && answers.get(1).startsWith("OK"), answers.toString());
        assertEquals("REFUSED 2 sessions are open on this connection (lockstep.client.sessions.per.connection)",
            answers.get(2));
        // Three asked in this second already: the fourth is refused for the rate, whatever else.
        assertTrue(rawOpen(3).startsWith("REFUSED more than 3 opens and resumes a second on this connection"));

        for (final ServiceMember member : running)
        {
            member.sessionLimits(new SessionLimits(100, 4096, 100));
        }
        // The table holds 16: clients A and B, the impostor's two, and twelve more; then it is full.
        String last = "";
        for (int i = 4; i < 30 && !last.startsWith("REFUSED"); i++)
        {
            last = rawOpen(i);
        }
        assertEquals("REFUSED the session table is full (16 sessions)", last);
        offer(clientA, 3);
        runUntil(() -> clientA.ackedSequence() == 0, "the sessions already open carry on");
        assertFalse(recorderA.closed);
    }

    @Test
    void atItsMemoryBoundALeaderRefusesNewSessionsAndKeepsServingTheOpenOnes()
    {
        runUntil(() -> clientA.isConnected() && leader() >= 0, "session open");
        for (final ServiceMember member : running)
        {
            // As a member whose heap holds 6 sessions with full egress buffers (ClusterNode sets it from the heap).
            member.sessionLimits(new SessionLimits(100, 4096, 100)).memorySessionLimit(6);
        }
        String last = "";
        int opened = 0;
        for (int i = 0; i < 10 && !last.startsWith("REFUSED"); i++)
        {
            last = rawOpen(i);
            opened += last.startsWith("OK") ? 1 : 0;
        }
        assertEquals("REFUSED this member's memory holds 6 sessions with full egress buffers (lockstep.memory)", last);
        assertEquals(4, opened, "clients A and B hold two of the six");
        offer(clientA, 4);
        runUntil(() -> clientA.ackedSequence() == 0, "the sessions already open carry on");
        assertFalse(recorderA.closed);
    }

    @Test
    void aMemberMessageNamingAnotherSenderThanItsConnectionIsDroppedAndCounted()
    {
        runUntil(() -> leader() >= 0, "a leader");
        final int leader = leader();
        final int from = (leader + 1) % 3;
        final int named = (leader + 2) % 3;
        final MemberMetrics metrics = running[leader].consensus().metrics();
        final long before = metrics.get(MemberMetrics.FORGED_SENDERS);
        final UnsafeBuffer out = new UnsafeBuffer(new byte[128]);
        final long term = running[leader].consensus().term();
        // Sent on member "from"'s own connection, naming member "named" as the voter and the follower.
        final int vote = io.lockstep.consensus.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            new VoteEncoder().wrapAndApplyHeader(out, 0,
            new io.lockstep.consensus.codecs.MessageHeaderEncoder()).term(term).voterId(named).candidateTerm(term)
            .granted(BooleanType.TRUE)
            .preVote(BooleanType.FALSE).configEpoch(0).encodedLength();
        assertTrue(network.transportFor(from).send(leader, out, 0, vote));
        runUntil(() -> metrics.get(MemberMetrics.FORGED_SENDERS) == before + 1,
            "the forged vote counted");
        final int notice = io.lockstep.consensus.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            new ConfigurationNoticeEncoder().wrapAndApplyHeader(out, 0,
            new io.lockstep.consensus.codecs.MessageHeaderEncoder()).memberId(named).configEpoch(99)
            .voters(1L << from).learners(0).configVersion(0).encodedLength();
        assertTrue(network.transportFor(from).send(leader, out, 0, notice));
        runUntil(() -> metrics.get(MemberMetrics.FORGED_SENDERS) == before + 2,
            "the forged notice counted");
        runFor(TimeUnit.MILLISECONDS.toNanos(100));
        assertEquals(leader, leader(), "nothing changed: the same leader");
        assertEquals(term, running[leader].consensus().term());
        assertTrue(running[leader].consensus().membership().isMember(leader), "the configuration is unchanged");
    }

    /** An open from the impostor's endpoint, as raw bytes; returns the code and detail of the answer. */
    private String rawOpen(final long correlationId)
    {
        final Transport raw = network.transportFor(IMPOSTOR);
        final UnsafeBuffer out = new UnsafeBuffer(new byte[128]);
        final int length = io.lockstep.cluster.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            new SessionConnectEncoder().wrapAndApplyHeader(out, 0,
            new io.lockstep.cluster.codecs.MessageHeaderEncoder()).correlationId(correlationId).resumeSessionId(-1)
            .lastEgressSequence(-1).putCredentials(new byte[0], 0, 0).encodedLength();
        assertTrue(raw.send(leader(), out, 0, length));
        final String[] answer = new String[1];
        final MessageHeaderDecoder header =
            new MessageHeaderDecoder();
        final SessionEventDecoder event = new SessionEventDecoder();
        runUntil(() ->
        {
            raw.poll(nowNs, (from, buffer, offset, l) ->
            {
                header.wrap(buffer, offset);
                if (SessionEventDecoder.TEMPLATE_ID == header.templateId())
                {
                    event.wrapAndApplyHeader(buffer, offset, header);
                    if (event.correlationId() == correlationId)
                    {
                        answer[0] = event.code() + " " + event.detail();
                    }
                }
            });
            return null != answer[0];
        }, "an answer to open " + correlationId);
        return answer[0];
    }

    @Test
    void aClientThatClosesEndsItsSessionAtOnceNotAtTheTimeout()
    {
        runUntil(clientA::isConnected, "session open");
        final long sessionId = clientA.sessionId();
        final long closedAt = nowNs;
        assertTrue(clientA.close(), "the close request was sent");
        assertEquals(SessionClient.CLOSED, clientA.offer(new UnsafeBuffer(new byte[8]), 0, 8));
        runUntil(() -> services[leader()].closes.contains(sessionId + " CLIENT_ACTION"),
            "the session closed by request");
        assertTrue(nowNs - closedAt < SESSION_TIMEOUT_NS / 2, "well before the session timeout");
    }

    @Test
    void aClientSaysWhichMemberItTalksToAndTheLeaderItKnows()
    {
        runUntil(() -> clientA.isConnected() && leader() >= 0, "session open");
        assertEquals(leader(), clientA.currentMember());
        assertEquals(leader(), clientA.knownLeader());
        final int oldLeader = leader();
        crash(oldLeader);
        runUntil(() -> clientA.isConnected() && leader() >= 0 && leader() != oldLeader, "resumed on a new leader");
        assertEquals(leader(), clientA.knownLeader());
    }

    @Test
    void aMessageOverTheClientsBoundIsRefusedWithoutSendingIt()
    {
        final SessionClient small = new SessionClient(network.transportFor(Transport.CLIENT_ENDPOINT_BASE + 1),
            new int[]{ 0, 1, 2 }, new Recorder(), TimeUnit.MILLISECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(150),
            64, 1024);
        assertEquals(SessionClient.TOO_LONG, small.offer(new UnsafeBuffer(new byte[1025]), 0, 1025));
        assertEquals(0, small.offer(new UnsafeBuffer(new byte[1024]), 0, 1024), "at the bound is fine");
    }

    @Test
    void theSessionResumesOnANewLeaderWithNothingLostOrRepeated()
    {
        runUntil(clientA::isConnected, "session open");
        final long sessionId = clientA.sessionId();
        for (int i = 0; i < 10; i++)
        {
            offer(clientA, i);
        }
        runUntil(() -> clientA.ackedSequence() == 9, "first ten acknowledged");
        final int oldLeader = leader();
        crash(oldLeader);
        for (int i = 10; i < 20; i++)
        {
            offer(clientA, i);
        }
        runUntil(() -> clientA.ackedSequence() == 19 && leader() >= 0 && leader() != oldLeader,
            "all twenty, new leader");
        assertEquals(sessionId, clientA.sessionId(), "the same session");
        final List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 20; i++)
        {
            expected.add(i);
        }
        assertEquals(expected, services[leader()].applied, "each applied once, in order, on the new leader");
        assertEquals(expected, recorderA.egress, "each echo once, in order");
    }

    @Test
    void keepalivesHoldAnIdleSessionOpenAndSilenceClosesIt()
    {
        runUntil(clientA::isConnected, "session open");
        final long sessionId = clientA.sessionId();
        runFor(4 * SESSION_TIMEOUT_NS);
        // A connect attempt the client abandoned (after a stale redirect) leaves an orphan session that times out:
        // that is the point of timeouts. The clients' own sessions must not.
        final List<String> closes = services[leader()].closes;
        assertFalse(closes.contains(sessionId + " TIMEOUT"), "an idle client that keeps alive stays open: " + closes);
        assertFalse(closes.contains(clientB.sessionId() + " TIMEOUT"), closes.toString());

        clientAAway = true;
        runUntil(() -> services[leader()].closes.contains(sessionId + " TIMEOUT"), "the silent session times out");
        clientAAway = false;
        runUntil(() -> recorderA.closed, "the returning client learns it is closed");
        assertTrue(clientA.isClosed());
    }

    @Test
    void egressMissedBeyondTheBufferIsReportedAsAGap()
    {
        runUntil(() -> clientA.isConnected() && clientB.isConnected(), "two sessions open");
        clientAAway = true;
        offer(clientB, -1);
        runUntil(() -> recorderB.egress.size() >= 100, "the flood reached the client that was there");
        runFor(TimeUnit.MILLISECONDS.toNanos(100));
        // Away for less than the session timeout, but 10 KB of egress went by a 4 KB buffer.
        network.partition(Transport.CLIENT_ENDPOINT_BASE, 1);
        network.healAll();
        clientAAway = false;
        // Its next echo comes with a sequence far beyond the last it saw: it resumes, and the leader says what is
        // gone for good.
        offer(clientA, 7);
        runUntil(() -> recorderA.gaps > 0, "the gap is reported");
        runUntil(() -> clientA.ackedSequence() == 0, "the session carries on after the gap");
        assertFalse(recorderA.closed);
        assertEquals(0, recorderB.gaps, "the client that was there saw no gap");
    }

    @Test
    void aTimerFiresOnceAsALogEntryAtTheSamePositionOnEveryMember()
    {
        runUntil(clientA::isConnected, "session open");
        offer(clientA, -2);
        runUntil(() -> services[0].timers.size() == 1 && services[1].timers.size() == 1 &&
            services[2].timers.size() == 1, "the timer fired on every member");
        runFor(TimeUnit.MILLISECONDS.toNanos(200));
        assertEquals(services[0].timers, services[1].timers, "same position");
        assertEquals(services[0].timers, services[2].timers, "same position");
        assertEquals(1, services[0].timers.size(), "once");
    }

    @Test
    void anOversizedMessageGetsAnErrorAndClosesOnlyThatSession()
    {
        runUntil(() -> clientA.isConnected() && clientB.isConnected(), "two sessions open");
        final long sessionId = clientA.sessionId();
        assertTrue(clientA.offer(new UnsafeBuffer(new byte[3000]), 0, 3000) >= 0);
        runUntil(() -> recorderA.closed, "the sender is told");
        // The client hears at once; the close is an entry, applied once committed.
        runUntil(() -> services[leader()].closes.contains(sessionId + " ERROR"), "the session closed with ERROR");
        offer(clientB, 5);
        runUntil(() -> clientB.ackedSequence() == 0, "the cluster carries on for others");
    }

    private SessionClient client(final int index, final Recorder recorder)
    {
        return new SessionClient(network.transportFor(Transport.CLIENT_ENDPOINT_BASE + index), new int[]{ 0, 1, 2 },
            recorder, TimeUnit.MILLISECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(150), 64, 64 * 1024);
    }

    private void start(final int i)
    {
        network.setUp(i, true);
        final ConsensusConfig config = new ConsensusConfig().memberId(i).members(members)
            .timeouts(SimCluster.ELECTION_TIMEOUT_NS, SimCluster.HEARTBEAT_NS).maxBlockBytes(16 * 1024)
            .maxInFlightBytes(64 * 1024).maxPendingClientAppends(1024);
        final Transport transport = network.transportFor(i);
        final ConsensusAgent consensus = new ConsensusAgent(config, () -> nowNs, () -> nowNs, transport, logs[i],
            states[i],
            new Random(random.nextLong()));
        services[i] = new FloodService();
        running[i] = new ServiceMember(consensus, transport, logs[i], services[i], SESSION_TIMEOUT_NS, 16,
            EGRESS_BUFFER, 16, new NoOpIdleStrategy()).sessionSecrets(new Random(random.nextLong()));
    }

    private void crash(final int i)
    {
        running[i] = null;
        network.setUp(i, false);
        logs[i] = logs[i].afterCrash(random);
    }

    private int leader()
    {
        for (int i = 0; i < 3; i++)
        {
            if (null != running[i] && Role.LEADER == running[i].consensus().role())
            {
                return i;
            }
        }
        return -1;
    }

    private void offer(final SessionClient client, final long value)
    {
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[8]);
        payload.putLong(0, value);
        assertTrue(client.offer(payload, 0, 8) >= 0);
    }

    private void step()
    {
        nowNs += random.nextInt(500) * 1_000L;
        network.now(nowNs);
        for (final ServiceMember member : running)
        {
            if (null != member)
            {
                member.doWork();
            }
        }
        if (!clientAAway)
        {
            clientA.doWork(nowNs);
        }
        clientB.doWork(nowNs);
    }

    private void runUntil(final BooleanSupplier condition, final String what)
    {
        for (int s = 0; s < 100_000 && !condition.getAsBoolean(); s++)
        {
            step();
        }
        assertTrue(condition.getAsBoolean(), "not reached: " + what);
    }

    private void runFor(final long durationNs)
    {
        final long end = nowNs + durationNs;
        while (nowNs < end)
        {
            step();
        }
    }
}
