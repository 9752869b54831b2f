package io.lockstep.consensus.node;

import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.ClusterSecret;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three members started from code, in this JVM, with no properties file: the service handed over as a factory and
 * the member secret as bytes. A client that names the members as {@code id=host:port} text gets every message
 * applied once and answered, through the loss of the leader.
 */
class ClusterNodeBuilderTest
{
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);
    private static final ClusterSecret SECRET = ClusterSecret.of(
        "a member secret handed over in code".getBytes(StandardCharsets.US_ASCII));

    @TempDir
    Path dir;

    private final List<ClusterNode> members = new ArrayList<>();
    /** Every service instance the members made, with the member it runs in. */
    private final List<CountingService> services = new CopyOnWriteArrayList<>();

    @AfterEach
    void close()
    {
        members.forEach(ClusterNode::close);
    }

    @Test
    void membersWriteSnapshotsATenthOfThePurgeDelayApartByMemberId()
    {
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), ClusterNode.snapshotWriteDelayNs(0, 1000));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(300), ClusterNode.snapshotWriteDelayNs(2, 1000));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1000), ClusterNode.snapshotWriteDelayNs(9, 1000));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), ClusterNode.snapshotWriteDelayNs(10, 1000), "ids wrap");
        assertEquals(0, ClusterNode.snapshotWriteDelayNs(2, 0), "no purge delay: no write delay either");
    }

    @Test
    void membersBuiltInCodeServeAClientThroughTheLossOfTheLeader() throws Exception
    {
        final int[] ports = { freePort(), freePort(), freePort() };
        for (int id = 0; id < 3; id++)
        {
            final int memberId = id;
            members.add(ClusterNode.builder()
                .memberId(id)
                .member(0, "127.0.0.1", ports[0]).member(1, "127.0.0.1", ports[1]).member(2, "127.0.0.1", ports[2])
                .dataDir(dir.resolve("member" + id))
                .service(() -> register(new CountingService(memberId)))
                .secret(SECRET)
                .durability(DurabilityPolicy.NONE)
                .set(NodeConfig.SEGMENT_LENGTH, Integer.toString(1 << 20))
                .start());
        }
        final ConcurrentHashMap<Long, Integer> answers = new ConcurrentHashMap<>();
        final String endpoints = "0=127.0.0.1:" + ports[0] + ",1=127.0.0.1:" + ports[1] + ",2=127.0.0.1:" + ports[2];
        try (ClusterClient client = ClusterClient.connect(endpoints,
            (sessionId, sequence, buffer, offset, length) -> answers.merge(buffer.getLong(offset), 1, Integer::sum)))
        {
            assertTrue(client.awaitConnected(30_000), "connected: " + client.closeReason());
            send(client, 0, 100);
            // A member new to the cluster votes only once it holds a committed entry of its leader's term: stopping
            // the leader before the followers have one would leave two members that cannot elect (a CI run under
            // load did). Applied means committed and held.
            for (final CountingService service : services)
            {
                pollUntil(client, () -> !service.applied.isEmpty(), "member " + service.memberId + " applied one");
            }
            // The leader stops with messages still in flight: those it did not acknowledge are resent to the next.
            final int leader = client.leaderId();
            assertTrue(leader >= 0, "the client knows its leader");
            members.get(leader).close();
            send(client, 100, 200);
            pollUntil(client, () -> answers.size() == 200, "answers to all 200 after the leader stopped");
            assertNotEquals(leader, client.leaderId(), "a new leader");
            assertTrue(answers.values().stream().allMatch(n -> 1 == n), "each answered once: " + answers);
            for (final CountingService service : services)
            {
                if (service.memberId != leader)
                {
                    pollUntil(client, () -> service.applied.size() == 200, "member " + service.memberId +
                        " applied 200");
                    assertEquals(200, service.applied.stream().distinct().count(), "each applied once");
                }
            }
        }
    }

    @Test
    void aKeyAndTheObjectInItsPlaceAreRefusedTogetherAndBadValuesAreNamedAsInAFile()
    {
        final NodeConfig.ConfigException both = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir)
            .secret(SECRET).set("lockstep.cluster.secret.file", "cluster.secret").config());
        assertTrue(both.getMessage().contains("lockstep.cluster.secret.file is set and secret(...) was given too"),
            both.getMessage());

        final NodeConfig.ConfigException service = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir)
            .service(() -> new CountingService(0)).set(NodeConfig.SERVICE, "com.example.Engine").config());
        assertTrue(service.getMessage().contains("lockstep.service is set and service(...) was given too"),
            service.getMessage());

        final NodeConfig.ConfigException missing = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(0).member(0, "127.0.0.1", 9101).config());
        assertTrue(missing.getMessage().contains("lockstep.data.dir"), missing.getMessage());

        final NodeConfig.ConfigException notAMember = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(3).member(0, "127.0.0.1", 9101).dataDir(dir).config());
        assertTrue(notAMember.getMessage().contains("lockstep.member.id=3 is not in lockstep.members"),
            notAMember.getMessage());

        assertThrows(IllegalArgumentException.class, () -> ClusterNode.builder().set("durability", "none"));
        final IllegalArgumentException misspelt = assertThrows(IllegalArgumentException.class,
            () -> ClusterNode.builder().set("lockstep.tls.link", "all"));
        assertTrue(misspelt.getMessage().contains("not a key a member reads"), misspelt.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClusterNode.builder().member(0, "10.0.0.1:1,1=10.6.6.6", 1));
        assertThrows(IllegalStateException.class, () -> ClusterNode.builder().member(0, "127.0.0.1", 9101)
            .set(NodeConfig.MEMBERS, "0=127.0.0.1:9101"));

        final NodeConfig.ConfigException sameSecret = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir).secret(SECRET)
            .toolSecret(ClusterSecret.of("a member secret handed over in code".getBytes(StandardCharsets.US_ASCII)))
            .config());
        assertTrue(sameSecret.getMessage().contains("the tool secret is also a member secret"),
            sameSecret.getMessage());

        // A rotation's second secret is read as a file's would be: one that is not there is named, not ignored.
        final NodeConfig.ConfigException accepted = assertThrows(NodeConfig.ConfigException.class, () -> ClusterNode
            .builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir).secret(SECRET)
            .set("lockstep.cluster.secret.accept.file", dir.resolve("old.secret").toString()).config());
        assertTrue(accepted.getMessage().contains("lockstep.cluster.secret.accept.file") &&
            accepted.getMessage().contains("not found"), accepted.getMessage());

        assertThrows(IllegalArgumentException.class, () -> ClusterNode.start(ClusterNode.builder().memberId(0)
            .member(0, "127.0.0.1", 9101).dataDir(dir).set(NodeConfig.SERVICE, "com.example.Engine").config(),
            () -> new CountingService(0)));
    }

    @Test
    void oneServiceInstanceForTwoMembersIsRefusedAndTheRefusedMemberLeavesNothingOpen() throws Exception
    {
        final int[] ports = { freePort(), freePort(), freePort() };
        final CountingService shared = new CountingService(0);
        members.add(builder(0, ports).service(() -> shared).start());
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> builder(1, ports).service(() -> shared).start());
        assertTrue(refused.getMessage().contains("another member of this JVM runs"), refused.getMessage());
        // The refused member closed its port and its log: the same member starts at once with its own instance.
        members.add(builder(1, ports).service(() -> new CountingService(1)).start());
        // And once the first member stops, its instance is free for a member of its own.
        members.remove(0).close();
        members.add(builder(2, ports).service(() -> shared).start());
    }

    private ClusterNodeBuilder builder(final int id, final int[] ports)
    {
        return ClusterNode.builder().memberId(id)
            .member(0, "127.0.0.1", ports[0]).member(1, "127.0.0.1", ports[1]).member(2, "127.0.0.1", ports[2])
            .dataDir(dir.resolve("shared" + id)).secret(SECRET).durability(DurabilityPolicy.NONE);
    }

    @Test
    void anObjectInPlaceOfAKeyIsUsedAndSaysSoAtStart() throws Exception
    {
        final NodeConfig config = ClusterNode.builder().memberId(0).member(0, "127.0.0.1", 9101).dataDir(dir)
            .secret(SECRET).service(() -> new CountingService(0)).dedicatedServiceThread(true).config();
        assertSame(SECRET, config.security().secret(), "the secret handed over");
        assertTrue(config.security().warnings().stream().noneMatch(w -> w.contains("member authentication is OFF")),
            config.security().warnings().toString());
        assertTrue(config.threading().dedicated(), "a dedicated service thread, which needs the service given");
    }

    private CountingService register(final CountingService service)
    {
        services.add(service);
        return service;
    }

    private static void send(final ClusterClient client, final long from, final long to)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[8]);
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        for (long i = from; i < to; )
        {
            message.putLong(0, i);
            if (client.offer(message, 0, 8) >= 0)
            {
                i++;
            }
            else
            {
                assertTrue(System.nanoTime() < deadline, "offered message " + i + ": " + client.closeReason());
                client.poll();
            }
        }
    }

    private static void pollUntil(final ClusterClient client, final BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, what + " within 30 s; client: " + client.closeReason());
            if (0 == client.poll())
            {
                Thread.onSpinWait();
            }
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /** Answers each message with its own first eight bytes, and keeps what it applied. */
    private static final class CountingService implements ClusteredService
    {
        final int memberId;
        final List<Long> applied = new CopyOnWriteArrayList<>();

        CountingService(final int memberId)
        {
            this.memberId = memberId;
        }

        public void onStart(final Cluster cluster, final SnapshotReader snapshot)
        {
        }

        public void onSessionOpen(final ClientSession session, final long timestamp)
        {
        }

        public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
        {
        }

        public void onSessionMessage(
            final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
            applied.add(buffer.getLong(offset));
            if (null != session)
            {
                session.offer(buffer, offset, 8);
            }
        }

        public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
        }

        public void onTimerEvent(final long correlationId, final long timestamp)
        {
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
}
