package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.HelloReplyEncoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.KeepAliveEncoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionEventCode;
import io.lockstep.cluster.codecs.SessionEventDecoder;
import io.lockstep.cluster.codecs.SessionEventEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bytes an attacker on the network could send a member, before and after the handshake, against one member's
 * transport with the cluster secret on: each closes the connection that sent it with a reason, and the member's
 * transport carries on and still serves a genuine client.
 */
class TcpTransportHostileInputTest
{
    private final List<String> problems = new ArrayList<>();
    private final List<Integer> delivered = new ArrayList<>();
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private TcpTransport member;
    private int port;

    @BeforeEach
    void start() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        final List<Member> members = List.of(new Member(0, "127.0.0.1", port, true),
            new Member(1, "127.0.0.1", 1, true));
        member = new TcpTransport(0, members, 1 << 20, 1 << 16, ClusterSecret.of(new byte[32]),
            ClientProtocolShapes.create()).problemListener(problems::add)
            .toolSecret(ClusterSecret.of("a-tool-secret-for-this-test".getBytes(StandardCharsets.US_ASCII)));
    }

    @AfterEach
    void close()
    {
        member.close();
    }

    @Test
    void aHandshakeMessageThatFillsThePreHandshakeBufferFollowedByAShortProofClosesOnlyThatConnection()
        throws IOException
    {
        // The proof's header lands on every offset around the end of the 8 KiB pre-handshake buffer.
        for (int end = TcpConnection.HANDSHAKE_BUFFER_LENGTH - 48; end <= TcpConnection.HANDSHAKE_BUFFER_LENGTH;
            end += 4)
        {
            final ByteArrayOutputStream attack = new ByteArrayOutputStream();
            final byte[] paddedHello = new byte[end - 12 - 4];
            System.arraycopy(hello(-1, true), 0, paddedHello, 0, 8 + HelloEncoder.BLOCK_LENGTH);
            attack.writeBytes(frame(paddedHello));
            attack.writeBytes(frame(headerOnly(HelloProofEncoder.TEMPLATE_ID, HelloProofEncoder.BLOCK_LENGTH)));
            assertClosedAfter(attack.toByteArray());
        }
        assertTrue(problems.get(0).contains("during the handshake"), problems.get(0));
        // Named by where it came from, the one thing an operator can act on.
        assertTrue(problems.get(0).contains("(from /127.0.0.1:"), problems.get(0));

        // The same short proof behind a Hello of the right length reaches the check of the proof's block.
        final ByteArrayOutputStream attack = new ByteArrayOutputStream();
        attack.writeBytes(frame(hello(-1, true)));
        attack.writeBytes(frame(headerOnly(HelloProofEncoder.TEMPLATE_ID, HelloProofEncoder.BLOCK_LENGTH)));
        assertClosedAfter(attack.toByteArray());
        assertTrue(last().contains("declares a block of 32 bytes, but 0 follow its header"), last());
        assertAGenuineClientGetsThrough();
    }

    @Test
    void handshakeMessagesOutOfOrderCloseTheConnection() throws IOException
    {
        final byte[] proof = frame(message(new HelloProofEncoder().wrapAndApplyHeader(scratch(), 0, header)
            .putProof(new byte[32], 0, 32).encodedLength()));
        final byte[] reply = frame(message(new HelloReplyEncoder().wrapAndApplyHeader(scratch(), 0, header)
            .memberId(1).authenticate(BooleanFlag.TRUE).putNonce(new byte[16], 0, 16)
            .putProof(new byte[32], 0, 32).encodedLength()));
        final byte[] keepAlive = frame(keepAlive());
        final byte[] authHello = frame(hello(-1, true));
        final byte[] plainHello = frame(hello(-1, false));
        final byte[][][] sequences = {
            {proof},
            {reply},
            {keepAlive},
            {authHello, authHello},
            {authHello, keepAlive},
            {authHello, reply},
            {plainHello, plainHello},
            {plainHello, proof},
        };
        for (final byte[][] sequence : sequences)
        {
            final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (final byte[] part : sequence)
            {
                bytes.writeBytes(part);
            }
            assertClosedAfter(bytes.toByteArray());
        }
        assertEquals(sequences.length, problems.size(), problems.toString());
        assertAGenuineClientGetsThrough();
    }

    @Test
    void aHelloClaimingAnIdAboveTheMembersOwnIsRefusedAtOnce() throws IOException
    {
        // Members dial only higher ids: a claim of member 1 here could only take this member's own link to 1.
        assertClosedAfter(frame(hello(1, true)));
        assertTrue(last().contains("above this member's own"), last());
    }

    @Test
    void messagesCoalescedInOneWriteAreDeliveredUpToTheFirstBadOne() throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes(frame(hello(-1, false)));
        for (int i = 0; i < 50; i++)
        {
            bytes.writeBytes(frame(keepAlive()));
        }
        final byte[] cut = keepAlive();
        bytes.writeBytes(frame(Arrays.copyOf(cut, cut.length - 1)));
        for (int i = 0; i < 50; i++)
        {
            bytes.writeBytes(frame(keepAlive()));
        }
        assertClosedAfter(bytes.toByteArray());
        assertEquals(50, delivered.size(), "the 50 whole messages before the cut one, and none after");
        assertTrue(last().contains("ends (8 bytes left)") || last().contains("but 15 follow"), last());
    }

    @Test
    void aDecoderThatThrowsClosesTheConnectionWhileTheReceiversOwnFailureGoesOnUp() throws IOException
    {
        final UnsafeBuffer event = new UnsafeBuffer(message(new SessionEventEncoder()
            .wrapAndApplyHeader(scratch(), 0, header).correlationId(1).sessionId(1).leaderId(0).appliedSequence(0)
            .leaderTerm(1).detail("").encodedLength()));
        // A code the schema does not have: SessionEventCode.get throws.
        event.putByte(8 + 16, (byte)77);
        final SessionEventDecoder decoder = new SessionEventDecoder();
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.getOutputStream().write(frame(hello(-1, false)));
            socket.getOutputStream().write(frame(event.byteArray()));
            awaitClosed(socket, (from, buffer, offset, length) ->
                decoder.wrap(buffer, offset + 8, SessionEventDecoder.BLOCK_LENGTH, SessionEventDecoder.SCHEMA_VERSION)
                    .code());
        }
        assertTrue(last().startsWith("could not decode template 2 of schema 103: java.lang.IllegalArgumentException"),
            last());

        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.getOutputStream().write(frame(hello(-1, false)));
            socket.getOutputStream().write(frame(event.byteArray()));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            assertThrows(IllegalStateException.class, () ->
            {
                while (System.nanoTime() < deadline)
                {
                    member.poll(System.nanoTime(), (from, buffer, offset, length) ->
                    {
                        throw new IllegalStateException("an invariant of the receiver");
                    });
                }
            });
        }
    }

    @Test
    void silentConnectsBeyondTheHandshakeBoundEvictTheOldestAndNeverLockOutAClient() throws IOException
    {
        member.limits(new ConnectionLimits(4, 4, TimeUnit.SECONDS.toNanos(30), 64L << 20));
        final List<Socket> silent = new ArrayList<>();
        try
        {
            for (int i = 0; i < 20; i++)
            {
                silent.add(new Socket("127.0.0.1", port));
                pollFor(20);
            }
            assertEquals(16, problems.stream().filter(p -> p.startsWith("evicted: 4 connections")).count(),
                problems.toString());
            assertAGenuineClientGetsThrough();
        }
        finally
        {
            for (final Socket s : silent)
            {
                s.close();
            }
        }
    }

    @Test
    void clientsPastTheBoundAreRefusedAndIdleOnesClosed() throws IOException
    {
        member.limits(new ConnectionLimits(2, 4, TimeUnit.SECONDS.toNanos(1), 64L << 20));
        try (Socket first = new Socket("127.0.0.1", port); Socket second = new Socket("127.0.0.1", port))
        {
            first.getOutputStream().write(frame(hello(-1, false)));
            second.getOutputStream().write(frame(hello(-1, false)));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (member.clientConnections() < 2)
            {
                assertTrue(System.nanoTime() < deadline, "two clients registered");
                member.poll(System.nanoTime(), (from, buffer, offset, length) -> { });
            }
            assertClosedAfter(frame(hello(-1, false)));
            assertTrue(last().contains("2 are open (lockstep.client.connections.max)"), last());

            // A tool has slots of its own: with the client slots full, it still gets in.
            final TcpTransport tool = new TcpTransport(-1, List.of(new Member(0, "127.0.0.1", port, true)), 0,
                1 << 16, ClusterSecret.of("a-tool-secret-for-this-test".getBytes(
                StandardCharsets.US_ASCII)), ClientProtocolShapes.create());
            try
            {
                final long toolDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!tool.isConnected(0) || member.clientConnections() < 3)
                {
                    assertTrue(System.nanoTime() < toolDeadline, "the tool got in: " + problems);
                    tool.poll(System.nanoTime(), (from, buffer, offset, length) -> { });
                    tool.flush(System.nanoTime());
                    member.poll(System.nanoTime(), (from, buffer, offset, length) -> { });
                    member.flush(System.nanoTime());
                }
            }
            finally
            {
                tool.close();
            }

            // Two seconds of the member's clock later, both are closed for silence.
            final long later = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            member.poll(later, (from, buffer, offset, length) -> { });
            assertEquals(0, member.clientConnections());
            assertTrue(last().startsWith("client connection silent for 1000 ms"), last());
        }
    }

    @Test
    void aClientWithNothingToSayHeartbeatsAndIsNotClosedAsIdle()
    {
        member.limits(new ConnectionLimits(4, 4, TimeUnit.SECONDS.toNanos(5), 64L << 20));
        // A client transport connects to every member, and may have nothing to say to most of them for long.
        final TcpTransport client = new TcpTransport(-1, List.of(new Member(0, "127.0.0.1", port, true)), 1 << 16);
        try
        {
            long nowNs = System.nanoTime();
            final long end = nowNs + TimeUnit.SECONDS.toNanos(20);
            final long realDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (nowNs < end)
            {
                assertTrue(System.nanoTime() < realDeadline, "20 s of the transports' clocks in 20 s of real time");
                client.poll(nowNs, (from, buffer, offset, length) -> { });
                client.flush(nowNs);
                member.poll(nowNs, (from, buffer, offset, length) -> delivered.add(from));
                member.flush(nowNs);
                if (member.clientConnections() > 0 || nowNs > end - TimeUnit.SECONDS.toNanos(19))
                {
                    // Time runs at 100 ms a step once connected: the clocks the idle limit and heartbeats read.
                    nowNs += TimeUnit.MILLISECONDS.toNanos(100);
                }
            }
            assertEquals(1, member.clientConnections(), "20 s without a message, 5 s idle limit: " + problems);
            assertEquals(List.of(), delivered, "heartbeats are the transport's own, never handed on");
            assertEquals(List.of(), problems);
        }
        finally
        {
            client.close();
        }
    }

    @Test
    void clientsBuffersGrowOnlyAsBytesArriveAndWithinTheBudgetForAllClients() throws IOException
    {
        member.limits(new ConnectionLimits(64, 64, TimeUnit.SECONDS.toNanos(30), 1024 * 1024));
        final UnsafeBuffer ingress = new UnsafeBuffer(new byte[8 + 16 + 4 + 60_000]);
        new IngressEncoder().wrapAndApplyHeader(ingress, 0, header).sessionId(1)
            .sequence(1).putPayload(new byte[60_000], 0, 60_000);
        final List<Socket> clients = new ArrayList<>();
        try
        {
            // A length prefix alone claims 60 KB and costs the member nothing: many such clients fit any budget.
            for (int i = 0; i < 40; i++)
            {
                final Socket socket = new Socket("127.0.0.1", port);
                clients.add(socket);
                socket.getOutputStream().write(frame(hello(-1, false)));
                socket.getOutputStream().write(Arrays.copyOf(frame(ingress.byteArray()), 4));
                pollFor(5);
            }
            assertEquals(40, member.clientConnections(), problems.toString());
            assertEquals(List.of(), problems, "prefixes alone take nothing from the budget");
            // Sending the bytes grows each buffer to 64 KiB: about 18 fit a 1 MiB budget, the rest are closed.
            for (final Socket socket : clients)
            {
                socket.getOutputStream().write(Arrays.copyOfRange(frame(ingress.byteArray()), 4,
                    4 + ingress.capacity()));
                pollFor(5);
            }
            pollFor(200);
            final long refused = problems.stream().filter(p -> p.contains("does not fit the buffers left for " +
                "clients")).count();
            assertTrue(refused >= 15 && refused <= 25, refused + " closed of 40: " + problems);
            assertEquals(40 - refused, delivered.size(), "the clients within the budget were served");
        }
        finally
        {
            for (final Socket socket : clients)
            {
                socket.close();
            }
        }
    }

    @Test
    void aClientsBuffersGrowToTheMessagesItSendsUpToTheBound() throws IOException
    {
        final byte[] payload = new byte[60_000];
        final UnsafeBuffer ingress = new UnsafeBuffer(new byte[8 + 16 + 4 + payload.length]);
        new IngressEncoder().wrapAndApplyHeader(ingress, 0, header).sessionId(1)
            .sequence(1).putPayload(payload, 0, payload.length);
        final List<Integer> lengths = new ArrayList<>();
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.getOutputStream().write(frame(hello(-1, false)));
            for (int i = 0; i < 3; i++)
            {
                socket.getOutputStream().write(frame(ingress.byteArray()));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lengths.size() < 3)
            {
                assertTrue(System.nanoTime() < deadline, "three 60 KB messages through an 8 KiB start");
                member.poll(System.nanoTime(), (from, buffer, offset, length) -> lengths.add(length));
            }
        }
        assertEquals(List.of(ingress.capacity(), ingress.capacity(), ingress.capacity()), lengths);
        assertEquals(List.of(), problems);
    }

    private void pollFor(final long millis)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < deadline)
        {
            member.poll(System.nanoTime(), (from, buffer, offset, length) -> delivered.add(from));
        }
    }

    @Test
    void anEncoderThatThrowsIsTheReceiversOwnFailureNotTheSenders()
    {
        final MessageShapes shapes = ClientProtocolShapes.create();
        final RuntimeException fromEncoder = assertThrows(IndexOutOfBoundsException.class, () ->
            new KeepAliveEncoder().wrapAndApplyHeader(new UnsafeBuffer(new byte[4]), 0, header));
        assertFalse(DecoderFaults.isDecoderFault(fromEncoder, shapes), "an encoder overflowing is a broken invariant");
        final RuntimeException fromEnum = assertThrows(IllegalArgumentException.class, () ->
            SessionEventCode.get((short)77));
        assertTrue(DecoderFaults.isDecoderFault(fromEnum, shapes), "an unknown enum value is the message's");
        assertFalse(DecoderFaults.isDecoderFault(new IllegalStateException("mine"), shapes));
    }

    private void assertAGenuineClientGetsThrough() throws IOException
    {
        delivered.clear();
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.getOutputStream().write(frame(hello(-1, false)));
            socket.getOutputStream().write(frame(keepAlive()));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (delivered.isEmpty())
            {
                assertTrue(System.nanoTime() < deadline, "a genuine client's message within 10 s");
                member.poll(System.nanoTime(), (from, buffer, offset, length) -> delivered.add(from));
            }
        }
    }

    private void assertClosedAfter(final byte[] bytes) throws IOException
    {
        final int before = problems.size();
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.getOutputStream().write(bytes);
            awaitClosed(socket, (from, buffer, offset, length) -> delivered.add(from));
        }
        assertEquals(before + 1, problems.size(), "one reason logged for the closed connection: " + problems);
    }

    private void awaitClosed(final Socket socket, final Transport.MessageHandler handler) throws IOException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        socket.setSoTimeout(1);
        while (true)
        {
            assertTrue(System.nanoTime() < deadline, "connection closed within 10 s");
            member.poll(System.nanoTime(), handler);
            member.flush(System.nanoTime());
            try
            {
                // What the member answered (a HelloReply) is read and dropped: the end of the stream is what counts.
                if (socket.getInputStream().read(new byte[4096]) < 0)
                {
                    return;
                }
            }
            catch (final SocketTimeoutException ex)
            {
                // Still open.
            }
            catch (final IOException ex)
            {
                return;
            }
        }
    }

    private String last()
    {
        return problems.get(problems.size() - 1);
    }

    private byte[] hello(final int memberId, final boolean authenticate)
    {
        return message(new HelloEncoder().wrapAndApplyHeader(scratch(), 0, header).memberId(memberId)
            .segmentLength(1 << 20).authenticate(authenticate ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(new byte[16], 0, 16).encodedLength());
    }

    private byte[] keepAlive()
    {
        return message(new KeepAliveEncoder().wrapAndApplyHeader(scratch(), 0, header).sessionId(1)
            .lastEgressSequence(0).encodedLength());
    }

    private static byte[] headerOnly(final int templateId, final int blockLength)
    {
        final ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort((short)blockLength).putShort((short)templateId).putShort((short)MessageHeaderEncoder.SCHEMA_ID)
            .putShort((short)MessageHeaderEncoder.SCHEMA_VERSION);
        return b.array();
    }

    private static byte[] frame(final byte[] message)
    {
        final ByteBuffer b = ByteBuffer.allocate(4 + message.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(message.length).put(message);
        return b.array();
    }

    private UnsafeBuffer scratch;

    private UnsafeBuffer scratch()
    {
        scratch = new UnsafeBuffer(new byte[256]);
        return scratch;
    }

    private byte[] message(final int bodyLength)
    {
        final byte[] out = new byte[MessageHeaderEncoder.ENCODED_LENGTH + bodyLength];
        scratch.getBytes(0, out);
        return out;
    }
}
