package io.lockstep.consensus;

import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.StatusRequestDecoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The member handshake over real sockets: the same secret connects, anything else is refused with a reason, a tool
 * is trusted only if it proved the secret, and a connection that never says Hello is dropped.
 */
class MemberAuthenticationTest
{
    private static final ClusterSecret SECRET = ClusterSecret.of("the-cluster-secret-0123456789".getBytes(
        StandardCharsets.US_ASCII));
    private static final ClusterSecret OTHER = ClusterSecret.of("another-cluster-secret-987654".getBytes(
        StandardCharsets.US_ASCII));
    private static final ClusterSecret TOOL = ClusterSecret.of("the-tool-secret-0123456789ab".getBytes(
        StandardCharsets.US_ASCII));

    private final List<Member> members = new ArrayList<>();
    private final List<TcpTransport> transports = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final List<Integer> receivedFrom = new ArrayList<>();

    @AfterEach
    void close()
    {
        transports.forEach(TcpTransport::close);
    }

    @Test
    void membersWithTheSameSecretConnectAndTalk() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = member(0, SECRET);
        final TcpTransport b = member(1, SECRET);
        await(() -> a.isConnected(1) && b.isConnected(0), a, b);
        assertTrue(a.send(1, message(), 0, message().capacity()));
        await(() -> receivedFrom.contains(0), a, b);
        assertTrue(problems.isEmpty(), problems.toString());
    }

    @Test
    void aMemberWithAnotherSecretIsRefusedWithTheReason() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = member(0, OTHER);
        final TcpTransport b = member(1, SECRET);
        await(() -> problems.stream().anyMatch(p -> p.contains("member 1 failed to prove the member secret")), a, b);
        // The accepting member proves first, so the other hangs up before its own proof: that is said there too, or
        // the cluster's operator would see nothing of a process dialling with the wrong secret.
        await(() -> problems.stream().anyMatch(p -> p.startsWith("a peer claiming to be member 0 from /127.0.0.1:") &&
            p.contains("closed the connection before proving the member secret")), a, b);
        pollFor(200, a, b);
        assertFalse(a.isConnected(1));
        assertFalse(b.isConnected(0), "never accepted as member 0");
    }

    @Test
    void aProcessClaimingAMemberIdWithoutTheSecretIsRefused() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport impostor = member(0, null);
        final TcpTransport b = member(1, SECRET);
        await(() -> problems.stream().anyMatch(p -> p.contains("claiming to be member 0") &&
            p.contains("did not offer to prove the member secret")), impostor, b);
        assertFalse(b.isConnected(0));
    }

    @Test
    void aMemberWithASecretRefusesOneWithout() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = member(0, SECRET);
        final TcpTransport open = member(1, null);
        await(() -> problems.stream().anyMatch(p -> p.contains("member 1 has no secret configured")), a, open);
        assertFalse(a.isConnected(1));
    }

    @Test
    void onlyAToolThatProvedTheSecretIsTrusted() throws Exception
    {
        membersOnFreePorts(1);
        final TcpTransport member = member(0, SECRET);
        final TcpTransport tool = member(-1, TOOL);
        final TcpTransport client = member(-1, null);
        final TcpTransport wrongTool = member(-1, OTHER);
        await(() -> tool.isConnected(0) && client.isConnected(0), member, tool, client, wrongTool);
        assertTrue(tool.send(0, message(), 0, message().capacity()));
        assertTrue(client.send(0, message(), 0, message().capacity()));
        await(() -> receivedFrom.size() >= 2, member, tool, client, wrongTool);
        final int first = receivedFrom.get(0);
        final int second = receivedFrom.get(1);
        assertTrue(first >= Transport.CLIENT_ENDPOINT_BASE && second >= Transport.CLIENT_ENDPOINT_BASE);
        assertEquals(1, (member.isTrusted(first) ? 1 : 0) + (member.isTrusted(second) ? 1 : 0),
            "exactly one of the two (the tool) is trusted");
        await(() -> problems.stream().anyMatch(p -> p.contains("member 0 failed to prove the tool secret")),
            member, wrongTool);
        assertFalse(wrongTool.isConnected(0));
        assertTrue(member.isTrusted(0), "member endpoints are members: trusted");
    }

    @Test
    void theToolSecretNeitherMakesAMemberNorIsTheMemberSecretAToolsCredential() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport member = member(1, SECRET);
        // A tool host holds the tool secret only: claiming member 0 with it, it cannot check the member's proof, and
        // has none of its own to give.
        final TcpTransport posingAsMember = member(0, TOOL);
        await(() -> problems.stream().anyMatch(p -> p.contains("member 1 failed to prove the member secret")), member,
            posingAsMember);
        pollFor(200, member, posingAsMember);
        assertFalse(member.isConnected(0), "never accepted as member 0");
        posingAsMember.close();
        // And the member secret is no tool credential: a tool proving it is not trusted.
        final TcpTransport memberSecretAsTool = member(-1, SECRET);
        await(() -> problems.stream().anyMatch(p -> p.contains("member 1 failed to prove the tool secret")), member,
            memberSecretAsTool);
        assertFalse(memberSecretAsTool.isConnected(1), "the member's proof under the tool secret does not check out");
    }

    @Test
    void aSecretIsRotatedWithoutStoppingTheCluster(@TempDir final Path dir)
        throws Exception
    {
        final ClusterSecret oldOnly = secretFile(dir, "old", "the-old-member-secret-0123456789\n");
        final ClusterSecret newOnly = secretFile(dir, "new", "the-new-member-secret-9876543210\n");
        // Step 1 proves the old and accepts both; step 2 proves the new and accepts both; step 3 is the new alone.
        final ClusterSecret oldThenNew = oldOnly.alsoAccepting(newOnly);
        final ClusterSecret newThenOld = newOnly.alsoAccepting(oldOnly);
        // Each step of the rotation meets the step before it: members restarted one at a time always connect.
        final ClusterSecret[][] steps = { {oldOnly, oldThenNew}, {oldThenNew, newThenOld}, {newThenOld, newOnly} };
        for (final ClusterSecret[] step : steps)
        {
            membersOnFreePorts(2);
            final TcpTransport a = member(members.size() - 2, step[0]);
            final TcpTransport b = member(members.size() - 1, step[1]);
            await(() -> a.isConnected(members.size() - 1) && b.isConnected(members.size() - 2), a, b);
            a.close();
            b.close();
            members.clear();
        }
        // But the old secret alone and the new one alone do not meet.
        membersOnFreePorts(2);
        final TcpTransport a = member(0, oldOnly);
        final TcpTransport b = member(1, newOnly);
        await(() -> problems.stream().anyMatch(p -> p.contains("failed to prove the member secret")), a, b);
    }

    private static ClusterSecret secretFile(final Path dir, final String name, final String text)
        throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, text);
        return ClusterSecret.read(file);
    }

    @Test
    void aMemberWithoutAToolSecretTrustsNoTool() throws Exception
    {
        membersOnFreePorts(1);
        final TcpTransport member = new TcpTransport(0, members, 1 << 20, 1 << 16, SECRET,
            MemberProtocolShapes.create()).problemListener(problems::add);
        transports.add(member);
        final TcpTransport tool = member(-1, TOOL);
        await(() -> problems.stream().anyMatch(p -> p.contains("this member has no tool secret configured")),
            member, tool);
    }

    @SuppressWarnings("try") // the silent connection only has to exist
    @Test
    void aConnectionThatNeverSaysHelloIsDropped() throws Exception
    {
        membersOnFreePorts(1);
        final TcpTransport member = member(0, SECRET);
        try (SocketChannel silent = SocketChannel.open(new InetSocketAddress("127.0.0.1", members.get(0).port())))
        {
            final long start = System.nanoTime();
            // The member's clock, not the wall's: 6 s of its time pass in a few polls.
            for (int i = 0; i < 20 && problems.isEmpty(); i++)
            {
                member.poll(start + i * TimeUnit.MILLISECONDS.toNanos(400), (f, b, o, l) -> { });
                if (problems.isEmpty())
                {
                    Thread.onSpinWait();
                }
            }
            assertTrue(problems.stream().anyMatch(p -> p.contains("no handshake within 5000 ms")), problems.toString());
        }
    }

    private static UnsafeBuffer message()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
        buffer.putShort(0, (short)8);
        buffer.putShort(2, (short)StatusRequestDecoder.TEMPLATE_ID);
        buffer.putShort(4, (short)MessageHeaderDecoder.SCHEMA_ID);
        buffer.putShort(6, (short)1);
        return buffer;
    }

    private TcpTransport member(final int id, final ClusterSecret secret)
    {
        final TcpTransport t = new TcpTransport(id, members, 1 << 20, 1 << 16, secret,
            MemberProtocolShapes.create()).toolSecret(TOOL);
        t.problemListener(problems::add);
        transports.add(t);
        return t;
    }

    private void membersOnFreePorts(final int count) throws IOException
    {
        for (int i = 0; i < count; i++)
        {
            try (ServerSocket socket = new ServerSocket(0))
            {
                members.add(new Member(i, "127.0.0.1", socket.getLocalPort(), true));
            }
        }
    }

    private void pollFor(final long ms, final TcpTransport... all)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < deadline)
        {
            pollAll(all);
        }
    }

    private void await(final BooleanSupplier condition, final TcpTransport... all)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "condition not reached in 10 s; problems: " + problems);
            pollAll(all);
        }
    }

    private void pollAll(final TcpTransport... all)
    {
        for (final TcpTransport t : all)
        {
            t.poll(System.nanoTime(), (from, buffer, offset, length) -> receivedFrom.add(from));
            t.flush(System.nanoTime());
        }
    }
}
