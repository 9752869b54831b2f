package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * TLS on each link class, between real transports on loopback: what each class requires, what each side proves, and
 * what is refused, with the reason.
 */
class TcpTransportTlsTest
{
    private static final ClusterSecret MEMBER_SECRET = ClusterSecret.of(
        "the-member-secret-of-this-test".getBytes(StandardCharsets.US_ASCII));
    private static final ClusterSecret TOOL_SECRET = ClusterSecret.of(
        "the-tool-secret-of-this-test!!".getBytes(StandardCharsets.US_ASCII));
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    @TempDir
    static Path dir;
    private static Path certs;
    private static Path otherCerts;

    /** An accepted connection's failure names the address it came from. */
    private static final Pattern ACCEPTED_FAILED =
        Pattern.compile("TLS with an accepted connection from /127\\.0\\.0\\.1:\\d+ failed: ");

    private final List<TcpTransport> transports = new ArrayList<>();
    /** Written by the transports' listeners and by the peers' threads ({@link #beside}), read by the test. */
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final List<byte[]> received = new ArrayList<>();
    private final List<Integer> senders = new ArrayList<>();
    private long clockOffsetNs;

    @BeforeAll
    static void makeCertificates() throws IOException
    {
        certs = dir.resolve("cluster");
        otherCerts = dir.resolve("other");
        DevCertificates.write(certs, List.of("127.0.0.1", "localhost"));
        DevCertificates.write(otherCerts, List.of("127.0.0.1", "localhost"));
    }

    @AfterEach
    void close()
    {
        transports.forEach(TcpTransport::close);
    }

    @Test
    void membersConnectWithMutualTlsAndMessagesOfEverySizeArriveWhole() throws IOException
    {
        final List<Member> members = members(true, true);
        final TcpTransport a = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport b = member(1, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> a.isConnected(1) && b.isConnected(0), a, b);
        assertTrue(a.isEncrypted(1));
        assertTrue(b.isEncrypted(0));

        // From a few bytes to several TLS records each, both ways, many at once.
        final List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++)
        {
            final byte[] payload = payload(i, i % 10 == 0 ? 60_000 : 1 + (i * 37) % 700);
            sent.add(payload);
            while (!a.send(1, ingress(i, payload), 0, IngressEncoder.BLOCK_LENGTH + 8 + 4 + payload.length))
            {
                pump(a, b);
            }
        }
        pumpUntil(() -> received.size() == sent.size(), a, b);
        for (int i = 0; i < sent.size(); i++)
        {
            assertArrayEquals(sent.get(i), received.get(i), "message " + i);
            assertEquals(0, senders.get(i));
        }
        assertTrue(b.send(0, ingress(7, payload(7, 100)), 0, IngressEncoder.BLOCK_LENGTH + 12 + 100));
        pumpUntil(() -> received.size() == sent.size() + 1, a, b);
        assertEquals(1, senders.get(sent.size()));
        assertEquals(List.of(), problems);
    }

    @Test
    void standbyLinksAreAClassOfTheirOwn() throws IOException
    {
        final List<Member> members = members(true, false);
        final TcpTransport a = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.STANDBY));
        final TcpTransport standby = member(1, members, memberFiles(certs), EnumSet.of(LinkClass.STANDBY));
        pumpUntil(() -> a.isConnected(1) && standby.isConnected(0), a, standby);
        assertTrue(a.isEncrypted(1));

        // Members-only TLS leaves the standby link in the clear.
        close();
        transports.clear();
        final List<Member> again = members(true, false);
        final TcpTransport c = member(0, again, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport d = member(1, again, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> c.isConnected(1) && d.isConnected(0), c, d);
        assertFalse(c.isEncrypted(1));
    }

    @Test
    void aMemberThatRequiresTlsRefusesAPeerInTheClear() throws IOException
    {
        final List<Member> members = members(true, true);
        final TcpTransport plain = member(0, members, memberFiles(certs), Set.of());
        final TcpTransport strict = member(1, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("refused member 0 in the clear")), plain, strict);
        assertFalse(strict.isConnected(0));
    }

    @Test
    void aCertificateFromAnotherAuthorityIsRefused() throws IOException
    {
        final List<Member> members = members(true, true);
        final TcpTransport a = member(0, members, memberFiles(otherCerts), EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport b = member(1, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("TLS with member 1 failed")), a, b);
        assertFalse(a.isConnected(1));
        assertFalse(b.isConnected(0));
        // The hint points at the certificates, not at a peer that does not speak TLS.
        assertTrue(problems.stream().filter(p -> p.contains("TLS with member 1 failed"))
            .allMatch(p -> p.contains("lockstep.tls.trust.file")), problems.toString());
    }

    @Test
    void aMembersCertificateMustNameTheHostItIsConfiguredAt() throws IOException
    {
        // Member 0 listens at 127.0.0.2, which the shared certificate does not name; it dials member 1, whose name
        // it checks and finds; member 1 checks member 0's and refuses it.
        final List<Member> members = List.of(new Member(0, "127.0.0.2", freePort(), true),
            new Member(1, "127.0.0.1", freePort(), true));
        final TcpTransport a = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport b = member(1, members, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("does not name 127.0.0.2")), a, b);
        assertFalse(b.isConnected(0));

        // The other way round: the member dialled is at a host its certificate does not name, and the dialler
        // refuses it, as a browser would.
        close();
        transports.clear();
        final List<Member> swapped = List.of(new Member(0, "127.0.0.1", freePort(), true),
            new Member(1, "127.0.0.2", freePort(), true));
        final TcpTransport c = member(0, swapped, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport d = member(1, swapped, memberFiles(certs), EnumSet.of(LinkClass.MEMBERS));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains(
            "TLS with member 1 failed: No subject alternative names matching IP address 127.0.0.2 found")), c, d);
        assertFalse(c.isConnected(1));
    }

    @Test
    void aClientThatTrustsTheAuthorityConnectsAndOneInTheClearIsRefused() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        final TcpTransport client = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> client.isConnected(0), m, client);
        assertTrue(client.send(0, ingress(1, payload(1, 50_000)), 0, IngressEncoder.BLOCK_LENGTH + 12 + 50_000));
        pumpUntil(() -> 1 == m.clientConnections() && received.stream().anyMatch(r -> r.length == 50_000), m,
            client);
        final int endpoint = Transport.CLIENT_ENDPOINT_BASE;
        assertTrue(m.isEncrypted(endpoint));
        assertFalse(m.isTrusted(endpoint));
        assertTrue(m.send(endpoint, ingress(2, payload(2, 40_000)), 0, IngressEncoder.BLOCK_LENGTH + 12 + 40_000));
        pumpUntil(() -> received.stream().anyMatch(r -> r.length == 40_000), m, client);

        final TcpTransport plainClient = client(members, null);
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("refused a client connection in the clear")), m,
            plainClient);
        assertEquals(1, m.clientConnections());
    }

    @Test
    void aClientThatDoesNotTrustTheAuthorityIsRefusedByItsOwnCheck() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        final TcpTransport client = client(members, TlsFiles.trusting(otherCerts.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("TLS with member 0 failed") &&
            p.contains("trust")), m, client);
        assertEquals(0, m.clientConnections());
    }

    @Test
    void aToolProvesTheToolSecretInsideTls() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.TOOLS));
        final TcpTransport tool = track(new TcpTransport(-1, members, 0, 1 << 20, TOOL_SECRET,
            ClientProtocolShapes.create()).problemListener(problems::add)
            .tls(TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)), EnumSet.of(LinkClass.TOOLS)));
        pumpUntil(() -> 1 == m.clientConnections() && tool.isConnected(0), m, tool);
        assertTrue(m.isEncrypted(Transport.CLIENT_ENDPOINT_BASE));
        assertTrue(m.isTrusted(Transport.CLIENT_ENDPOINT_BASE));

        // A tool in the clear is refused when tools must use TLS, even with the right secret.
        final TcpTransport plainTool = track(new TcpTransport(-1, members, 0, 1 << 20, TOOL_SECRET,
            ClientProtocolShapes.create()).problemListener(problems::add));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("refused a tool connection in the clear")), m,
            plainTool);
    }

    @Test
    void aMemberAnswersAFewTlsHandshakesPerPollAndTheRestOnLaterPollsInOrder() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        // Ten genuine ClientHellos, all waiting before the member's next poll.
        final SSLContext context = trustingContext(certs);
        final List<Socket> sockets = new ArrayList<>();
        try
        {
            for (int i = 0; i < 10; i++)
            {
                final Socket socket = new Socket("127.0.0.1", members.get(0).port());
                sockets.add(socket);
                socket.getOutputStream().write(clientHello(context));
            }
            pump(m);
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            while (answered(sockets) < TlsPolicy.HANDSHAKE_READS_PER_POLL)
            {
                assertTrue(System.nanoTime() < deadline, "answered " + answered(sockets) + "; " + problems);
            }
            // The member wrote its answers inside that one poll, so no more can arrive until it polls again.
            assertEquals(TlsPolicy.HANDSHAKE_READS_PER_POLL, answered(sockets), "answered in one poll");
            while (answered(sockets) < sockets.size())
            {
                assertTrue(System.nanoTime() < deadline, "answered " + answered(sockets) + "; " + problems);
                pump(m);
                assertTrue(m.tlsHandshakeReadsLastPoll() <= TlsPolicy.HANDSHAKE_READS_PER_POLL);
            }
        }
        finally
        {
            for (final Socket socket : sockets)
            {
                socket.close();
            }
        }
    }

    private static int answered(final List<Socket> sockets) throws IOException
    {
        int answered = 0;
        for (final Socket socket : sockets)
        {
            answered += socket.getInputStream().available() > 0 ? 1 : 0;
        }
        return answered;
    }

    private static byte[] clientHello(final SSLContext context) throws IOException
    {
        final SSLEngine engine = context.createSSLEngine("127.0.0.1", 1);
        engine.setUseClientMode(true);
        final ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        final byte[] hello = new byte[out.remaining()];
        out.get(hello);
        return hello;
    }

    private static SSLContext trustingContext(final Path from) throws Exception
    {
        final SSLContext context = SSLContext.getInstance("TLSv1.3");
        final KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", PemFiles.certificates(from.resolve(DevCertificates.AUTHORITY)).get(0));
        final TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
        factory.init(trust);
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }

    @Test
    void garbageInsideOrInPlaceOfTlsClosesOnlyThatConnection() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        final int port = members.get(0).port();
        final byte[] oversized = new byte[5 + 30_000];
        oversized[0] = 0x16;
        oversized[1] = 0x03;
        oversized[2] = 0x03;
        oversized[3] = (byte)0x80;
        final byte[][] notTls = {
            oversized,
            { 0x16, 0x03, 0x01, 0x00, 0x20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 },
            { 0x16, 0x03, 0x03, (byte)0xff, (byte)0xff, 0, 0, 0 },
            { 0x16, 0x03, 0x03, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00 },
        };
        for (final byte[] bytes : notTls)
        {
            try (Socket socket = new Socket("127.0.0.1", port))
            {
                socket.getOutputStream().write(bytes);
                awaitClosed(socket, m);
            }
        }
        assertTrue(problems.stream().anyMatch(p -> ACCEPTED_FAILED.matcher(p).lookingAt()),
            problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("a TLS record longer than")), problems.toString());
        assertTrue(problems.stream().noneMatch(p -> p.contains("no handshake within")), problems.toString());
        // Bytes that are not TLS are no certificate's fault: the hint names the link setting instead.
        assertTrue(problems.stream().filter(p -> ACCEPTED_FAILED.matcher(p).lookingAt())
            .noneMatch(p -> p.contains("lockstep.tls.trust.file")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("the peer does not speak TLS")), problems.toString());

        // The first two bytes in separate writes: still told apart, and the handshake goes on.
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            final byte[] hello = clientHello(trustingContext(certs));
            socket.getOutputStream().write(hello, 0, 1);
            socket.getOutputStream().flush();
            pump(m);
            socket.getOutputStream().write(hello, 1, hello.length - 1);
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            while (0 == socket.getInputStream().available())
            {
                assertTrue(System.nanoTime() < deadline, "no answer to a ClientHello sent a byte at a time");
                pump(m);
            }
        }

        // A genuine TLS link, then frames that are garbage: the same checks as in the clear.
        final SSLContext context = trustingContext(certs);
        try (SSLSocket socket = (SSLSocket)context.getSocketFactory()
            .createSocket("127.0.0.1", port))
        {
            final Thread handshake = new Thread(() ->
            {
                try
                {
                    socket.startHandshake();
                    socket.getOutputStream().write(new byte[]{ (byte)0xff, (byte)0xff, (byte)0xff, 0x7f });
                    socket.getOutputStream().flush();
                }
                catch (final IOException ex)
                {
                    // Closed by the member: what the test waits for below.
                }
            });
            handshake.start();
            pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("bad message length 2147483647")), m);
            handshake.join(TimeUnit.SECONDS.toMillis(10));
        }

        final TcpTransport client = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> 1 == m.clientConnections(), m, client);
    }

    private void awaitClosed(final Socket socket, final TcpTransport member) throws IOException
    {
        socket.setSoTimeout(1);
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (true)
        {
            assertTrue(System.nanoTime() < deadline, "the member did not close the connection; " + problems);
            pump(member);
            try
            {
                if (socket.getInputStream().read() < 0)
                {
                    return;
                }
            }
            catch (final SocketTimeoutException ex)
            {
                // Still open.
            }
            catch (final SocketException ex)
            {
                return;
            }
        }
    }

    @Test
    void connectionsInTheirTlsHandshakeOrWaitingForAProofCountAgainstTheHandshakeBound() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS))
            .limits(new ConnectionLimits(256, 8, TimeUnit.SECONDS.toNanos(30), 1 << 26));
        final byte[] hello = clientHello(trustingContext(certs));
        final byte[][] openings = {
            { 0x16, 0x03 },
            hello,
            clientHelloFrame(true),
        };
        for (final byte[] opening : openings)
        {
            final List<Socket> sockets = new ArrayList<>();
            try
            {
                for (int i = 0; i < 20; i++)
                {
                    final Socket socket = new Socket("127.0.0.1", members.get(0).port());
                    sockets.add(socket);
                    socket.getOutputStream().write(opening);
                    pump(m);
                }
                final long deadline = System.nanoTime() + TIMEOUT_NS;
                while (closed(sockets) < 12)
                {
                    assertTrue(System.nanoTime() < deadline, "closed " + closed(sockets) + " of 20 with room for " +
                        "8 handshakes; " + problems);
                    pump(m);
                }
            }
            finally
            {
                for (final Socket socket : sockets)
                {
                    socket.close();
                }
            }
        }
        assertTrue(problems.stream().anyMatch(p -> p.contains("evicted: 8 connections were in their handshake")),
            problems.toString());
    }

    @Test
    void aPeerThatNeverReadsAndFloodsKeyUpdatesIsClosedOnceItsAnswersPileUp() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        try (SSLSocket socket = (SSLSocket)trustingContext(certs).getSocketFactory()
            .createSocket())
        {
            socket.setReceiveBufferSize(4096);
            socket.setSoLinger(true, 0);
            socket.connect(new InetSocketAddress("127.0.0.1", members.get(0).port()));
            final Thread hello = beside("the client's hello failed: ", () ->
            {
                socket.startHandshake();
                socket.getOutputStream().write(clientHelloFrame());
                socket.getOutputStream().write(ingressFrame(new byte[8]));
                socket.getOutputStream().flush();
            });
            pumpUntil(() -> !senders.isEmpty(), m);
            hello.join(TimeUnit.SECONDS.toMillis(10));
            // The member sends until the socket is full (the peer never reads): its records also earn the peer
            // credit for records without data, so that it is the bound on unanswered key updates that closes it.
            final UnsafeBuffer egress = new UnsafeBuffer(new byte[60_000]);
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            // Full when sends are refused poll after poll for a while: the peer's receive window and this side's
            // socket buffer are both full, and nothing more leaves.
            int refusedInARow = 0;
            while (refusedInARow < 500)
            {
                assertTrue(System.nanoTime() < deadline, "the member's socket never filled");
                refusedInARow = m.send(senders.get(0), egress, 0, egress.capacity()) ? 0 : refusedInARow + 1;
                pump(m);
            }
            // Closed by the member is what the test waits for: no problem of its own.
            final Thread flood = beside(null, () ->
            {
                // Each call on an open TLS 1.3 link sends a key update that asks for one back; nothing is read.
                // 4 KiB of data before each pays for it, so that only the bound on unanswered ones can stop it.
                final byte[] data = ingressFrame(new byte[4096]);
                for (int i = 0; i < 1_000_000; i++)
                {
                    socket.getOutputStream().write(data);
                    socket.startHandshake();
                }
            });
            pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("more than " + TlsLink.MAX_UNANSWERED +
                " handshake messages (key updates) while the answer to the first was still unsent")), m);
            flood.join(TimeUnit.SECONDS.toMillis(10));
        }
        final TcpTransport client = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> 1 == m.clientConnections(), m, client);
    }

    @Test
    void aPeerThatReadsEveryAnswerButSendsKeyUpdatesAsFastAsItCanIsClosed() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        try (SSLSocket socket = (SSLSocket)trustingContext(certs).getSocketFactory()
            .createSocket())
        {
            socket.setSoLinger(true, 0);
            socket.connect(new InetSocketAddress("127.0.0.1", members.get(0).port()));
            // Closed by the member is what the test waits for: no problem of its own.
            final Thread flood = beside(null, () ->
            {
                socket.startHandshake();
                socket.getOutputStream().write(clientHelloFrame());
                socket.getOutputStream().flush();
                // Reading takes the member's answers in, so none is ever left unsent.
                beside(null, () ->
                {
                    while (socket.getInputStream().read() >= 0)
                    {
                        Thread.onSpinWait();
                    }
                });
                for (int i = 0; i < 1_000_000; i++)
                {
                    socket.startHandshake();
                }
            });
            pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("records without data (key updates) faster")),
                m);
            flood.join(TimeUnit.SECONDS.toMillis(10));
        }
    }

    @Test
    void aRecordSentPiecemealCostsNoHandshakeReadAndAFloodOfOpeningsEvictsItsOwnFirst() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS))
            .limits(new ConnectionLimits(256, 8, TimeUnit.SECONDS.toNanos(30), 1 << 26));
        final byte[] hello = clientHello(trustingContext(certs));
        final List<Socket> flood = new ArrayList<>();
        try (Socket genuine = new Socket("127.0.0.1", members.get(0).port()))
        {
            // Half a ClientHello: the engine is not asked to look at it, so it takes none of the poll's share.
            genuine.getOutputStream().write(hello, 0, hello.length / 2);
            for (int i = 0; i < 20; i++)
            {
                pump(m);
                assertEquals(0, m.tlsHandshakeReadsLastPoll(), "a handshake read spent on half a record");
            }
            genuine.getOutputStream().write(hello, hello.length / 2, hello.length - hello.length / 2);
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            while (0 == genuine.getInputStream().available())
            {
                assertTrue(System.nanoTime() < deadline, "the whole ClientHello was not answered; " + problems);
                pump(m);
            }
            // Now connections that send only a record's first two bytes, or one whole record that holds only the
            // first four bytes of a ClientHello, twenty of each, four times the room there is: none of them has
            // said anything the engine could act on, so they are the ones evicted, and the connection that did stays.
            final byte[][] openings = { { 0x16, 0x03 }, { 0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x01,
                (byte)0xaf } };
            for (final byte[] opening : openings)
            {
                final List<Socket> round = new ArrayList<>();
                for (int i = 0; i < 20; i++)
                {
                    final Socket socket = new Socket("127.0.0.1", members.get(0).port());
                    flood.add(socket);
                    round.add(socket);
                    socket.getOutputStream().write(opening);
                    pump(m);
                }
                while (closed(round) < 12)
                {
                    assertTrue(System.nanoTime() < deadline, "closed " + closed(round) + " of 20; " + problems);
                    pump(m);
                }
                assertEquals(0, closed(List.of(genuine)), "the connection whose handshake moved on was evicted");
            }
        }
        finally
        {
            for (final Socket socket : flood)
            {
                socket.close();
            }
        }
    }

    @Test
    void keyUpdatesSpendAShareAPollAndNeverHoldUpAnotherLinksData() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(certs), EnumSet.of(LinkClass.CLIENTS));
        final int updates = 200;
        try (SSLSocket socket = (SSLSocket)trustingContext(certs).getSocketFactory()
            .createSocket();
            SSLSocket genuine = (SSLSocket)trustingContext(certs).getSocketFactory()
                .createSocket())
        {
            socket.connect(new InetSocketAddress("127.0.0.1", members.get(0).port()));
            genuine.connect(new InetSocketAddress("127.0.0.1", members.get(0).port()));
            final Thread client = beside("client: ", () ->
            {
                genuine.startHandshake();
                genuine.getOutputStream().write(clientHelloFrame());
                genuine.getOutputStream().flush();
                socket.startHandshake();
                socket.getOutputStream().write(clientHelloFrame());
                // 4 KiB of data per key update to come: enough credit that none of them is a flood.
                for (int i = 0; i < updates + 10; i++)
                {
                    socket.getOutputStream().write(ingressFrame(new byte[4096]));
                }
                socket.getOutputStream().flush();
            });
            pumpUntil(() -> received.size() == updates + 10, m);
            client.join(TimeUnit.SECONDS.toMillis(10));
            // The member does not poll while the key updates are sent: on loopback each write is in the member's
            // socket when it returns, so they all wait there at once, as a burst saved up would arrive.
            for (int i = 0; i < updates; i++)
            {
                socket.startHandshake();
            }
            // And another client's message, waiting in the same poll: its records carry data, so it is read
            // whatever the key updates spent.
            genuine.getOutputStream().write(ingressFrame(new byte[777]));
            genuine.getOutputStream().flush();
            pump(m);
            assertTrue(received.stream().anyMatch(r -> r.length == 777), "the other client's message was held up");
            int total = m.tlsQuietRecordsLastPoll();
            final long deadline = System.nanoTime() + TIMEOUT_NS;
            while (total < updates)
            {
                assertTrue(System.nanoTime() < deadline, "key updates decrypted: " + total + "; " + problems);
                pump(m);
                // The share, plus at most one more per link that had started a record without data.
                assertTrue(m.tlsQuietRecordsLastPoll() <= QuietRecordShare.PER_POLL + 1,
                    "decrypted in one poll: " + m.tlsQuietRecordsLastPoll());
                total += m.tlsQuietRecordsLastPoll();
            }
            assertTrue(problems.isEmpty(), "a genuine link with credit is not a flood: " + problems);
            assertEquals(2, m.clientConnections());
        }
    }

    /** A client's ingress message, framed. */
    private static byte[] ingressFrame(final byte[] payload)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4 + 64 + payload.length]);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + new IngressEncoder()
            .wrapAndApplyHeader(buffer, 4, new MessageHeaderEncoder()).sessionId(1).sequence(0)
            .putPayload(payload, 0, payload.length).encodedLength();
        buffer.putInt(0, length, ByteOrder.LITTLE_ENDIAN);
        final byte[] frame = new byte[4 + length];
        buffer.getBytes(0, frame);
        return frame;
    }

    /** A plain client's Hello, framed: what a client says first, inside its TLS link. */
    private static byte[] clientHelloFrame()
    {
        return clientHelloFrame(false);
    }

    /** @param tool true: a tool's Hello, which asks to prove the tool secret (and then has the member wait). */
    private static byte[] clientHelloFrame(final boolean tool)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + new HelloEncoder()
            .wrapAndApplyHeader(buffer, 4, new MessageHeaderEncoder()).memberId(-1).segmentLength(0)
            .authenticate(tool ? BooleanFlag.TRUE
                : BooleanFlag.FALSE)
            .putNonce(new byte[16], 0, 16).encodedLength();
        buffer.putInt(0, length, ByteOrder.LITTLE_ENDIAN);
        final byte[] frame = new byte[4 + length];
        buffer.getBytes(0, frame);
        return frame;
    }

    private static int closed(final List<Socket> sockets) throws IOException
    {
        int closed = 0;
        for (final Socket socket : sockets)
        {
            socket.setSoTimeout(1);
            try
            {
                while (true)
                {
                    if (socket.getInputStream().read() < 0)
                    {
                        closed++;
                        break;
                    }
                }
            }
            catch (final SocketTimeoutException ex)
            {
                // Open, and nothing (more) to read.
            }
            catch (final SocketException ex)
            {
                closed++;
            }
        }
        return closed;
    }

    @Test
    void aTlsPeerOfAMemberWithoutTlsFilesIsToldWhy() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = track(new TcpTransport(0, members, 1 << 20, 1 << 16, MEMBER_SECRET,
            ClientProtocolShapes.create()).problemListener(problems::add));
        final TcpTransport client = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("this member has no TLS files")), m, client);
    }

    @Test
    void newFilesAreTakenForNewConnectionsWithoutARestart() throws IOException
    {
        final Path live = dir.resolve("live");
        Files.createDirectories(live);
        for (final String name : List.of(DevCertificates.AUTHORITY, DevCertificates.CERTIFICATE, DevCertificates.KEY))
        {
            Files.copy(certs.resolve(name), live.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = member(0, members, memberFiles(live), EnumSet.of(LinkClass.CLIENTS));
        final TcpTransport before = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> 1 == m.clientConnections(), m, before);

        // A half-written key is looked at again (it may be mid-replacement), then reported; the loaded files stay.
        Files.writeString(live.resolve(DevCertificates.KEY), "-----BEGIN PRIVATE KEY-----\nAAAA\n");
        clockOffsetNs += TimeUnit.SECONDS.toNanos(TlsFiles.RECHECK_SECONDS + 1);
        pump(m, before);
        assertTrue(problems.stream().noneMatch(p -> p.contains("do not load")), problems.toString());
        clockOffsetNs += TimeUnit.SECONDS.toNanos(TlsFiles.RECHECK_SECONDS + 1);
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("do not load")), m, before);
        final TcpTransport during = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> 2 == m.clientConnections(), m, before, during);
        during.close();
        pumpUntil(() -> 1 == m.clientConnections(), m, before);

        // A trust file replaced by something that is not a certificate file at all: reported without reading it.
        final Path oversized = live.resolve("oversized.pem");
        try (RandomAccessFile file = new RandomAccessFile(oversized.toFile(), "rw"))
        {
            file.setLength(PemFiles.MAX_FILE_BYTES + 1);
        }
        final Path trustFile = live.resolve(DevCertificates.AUTHORITY);
        final Path saved = live.resolve("ca.saved");
        Files.move(trustFile, saved);
        Files.move(oversized, trustFile);
        for (int i = 0; i < 2; i++)
        {
            clockOffsetNs += TimeUnit.SECONDS.toNanos(TlsFiles.RECHECK_SECONDS + 1);
            pump(m, before);
        }
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("too long for a certificate or key file")), m,
            before);
        Files.delete(trustFile);
        Files.createDirectory(trustFile);
        clockOffsetNs += TimeUnit.SECONDS.toNanos(TlsFiles.RECHECK_SECONDS + 1);
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("not found (or not a regular file)")), m, before);
        Files.delete(trustFile);
        Files.move(saved, trustFile);

        // The new authority's files, renamed in: the next connection is served with them, the open one stays.
        for (final String name : List.of(DevCertificates.AUTHORITY, DevCertificates.CERTIFICATE, DevCertificates.KEY))
        {
            final Path staged = live.resolve(name + ".new");
            Files.copy(otherCerts.resolve(name), staged, StandardCopyOption.REPLACE_EXISTING);
            Files.move(staged, live.resolve(name), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        }
        clockOffsetNs += TimeUnit.SECONDS.toNanos(TlsFiles.RECHECK_SECONDS + 1);
        pump(m, before);
        final TcpTransport after = client(members, TlsFiles.trusting(otherCerts.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> 2 == m.clientConnections(), m, before, after);
        assertTrue(before.isConnected(0));
    }

    @Test
    void aMembersFilesMustHoldACertificateAndAMatchingKey() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = track(new TcpTransport(0, members, 1 << 20, 1 << 16, MEMBER_SECRET,
            ClientProtocolShapes.create()));
        final TlsFiles trustOnly = TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY));
        assertThrows(IllegalArgumentException.class, () -> m.tls(trustOnly, EnumSet.of(LinkClass.MEMBERS)));

        final IOException wrongKey = assertThrows(IOException.class, () -> TlsFiles.load(
            certs.resolve(DevCertificates.CERTIFICATE), otherCerts.resolve(DevCertificates.KEY),
            certs.resolve(DevCertificates.AUTHORITY)));
        assertTrue(wrongKey.getMessage().contains("is not the private key of the first certificate"),
            wrongKey.getMessage());
        final Path traditional = dir.resolve("traditional.key");
        Files.writeString(traditional, "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        final IOException format = assertThrows(IOException.class, () -> TlsFiles.load(
            certs.resolve(DevCertificates.CERTIFICATE), traditional, certs.resolve(DevCertificates.AUTHORITY)));
        assertTrue(format.getMessage().contains("openssl pkcs8 -topk8 -nocrypt"), format.getMessage());
        final IOException noCertificates = assertThrows(IOException.class, () -> TlsFiles.trusting(traditional));
        assertTrue(noCertificates.getMessage().contains("holds no certificate") ||
            noCertificates.getMessage().contains("not a PEM file"), noCertificates.getMessage());
    }

    private static TlsFiles memberFiles(final Path from) throws IOException
    {
        return TlsFiles.load(from.resolve(DevCertificates.CERTIFICATE), from.resolve(DevCertificates.KEY),
            from.resolve(DevCertificates.AUTHORITY));
    }

    private TcpTransport member(final int id, final List<Member> members, final TlsFiles files,
        final Set<LinkClass> encrypted)
    {
        return track(new TcpTransport(id, members, 1 << 20, 1 << 17, MEMBER_SECRET, ClientProtocolShapes.create())
            .problemListener(problems::add).toolSecret(TOOL_SECRET).tls(files, encrypted));
    }

    private TcpTransport client(final List<Member> members, final TlsFiles files)
    {
        final TcpTransport client = new TcpTransport(-1, members, 1 << 17).problemListener(problems::add);
        if (null != files)
        {
            client.tls(files, EnumSet.of(LinkClass.CLIENTS));
        }
        return track(client);
    }

    private TcpTransport track(final TcpTransport transport)
    {
        transports.add(transport);
        return transport;
    }

    private static List<Member> members(final boolean firstVoting, final boolean secondVoting) throws IOException
    {
        return List.of(new Member(0, "127.0.0.1", freePort(), firstVoting),
            new Member(1, "127.0.0.1", freePort(), secondVoting));
    }

    private void pumpUntil(final BooleanSupplier done, final TcpTransport... parties)
    {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!done.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                fail("not done within " + TimeUnit.NANOSECONDS.toSeconds(TIMEOUT_NS) + " s; problems: " + problems);
            }
            pump(parties);
        }
    }

    private void pump(final TcpTransport... parties)
    {
        final long now = System.nanoTime() + clockOffsetNs;
        for (final TcpTransport t : parties)
        {
            t.poll(now, this::onMessage);
            t.flush(now);
        }
    }

    private void onMessage(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
        if (IngressDecoder.TEMPLATE_ID != header.templateId())
        {
            return;
        }
        final IngressDecoder ingress = new IngressDecoder().wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH,
            header.blockLength(), header.version());
        final byte[] payload = new byte[ingress.payloadLength()];
        ingress.getPayload(payload, 0, payload.length);
        received.add(payload);
        senders.add(endpoint);
    }

    private static UnsafeBuffer ingress(final long sequence, final byte[] payload)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[payload.length + 64]);
        new IngressEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).sessionId(1).sequence(sequence)
            .putPayload(payload, 0, payload.length);
        return buffer;
    }

    private static byte[] payload(final int seed, final int length)
    {
        final byte[] payload = new byte[length];
        for (int i = 0; i < length; i++)
        {
            payload[i] = (byte)(seed * 31 + i);
        }
        return payload;
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /** What a peer does on its socket, on a thread beside the member's polls. */
    private interface PeerIo
    {
        void run() throws IOException;
    }

    /**
     * Run a peer's socket I/O on a daemon thread of its own.
     *
     * @param failure what an I/O error is recorded as in {@link #problems} (the error appended), or null where the
     *                member closing the socket is what the test waits for.
     * @return the started thread.
     */
    private Thread beside(final String failure, final PeerIo io)
    {
        final Thread thread = new Thread(() ->
        {
            try
            {
                io.run();
            }
            catch (final IOException ex)
            {
                if (null != failure)
                {
                    problems.add(failure + ex);
                }
            }
        });
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

}
