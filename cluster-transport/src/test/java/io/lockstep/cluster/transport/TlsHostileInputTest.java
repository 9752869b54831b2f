package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A TLS port facing peers that do not play by the rules: handshakes by the hundred, garbage inside or in place of
 * records, key updates as a flood, records sent a byte at a time. Each costs only its own connection, within bounds.
 */
class TlsHostileInputTest extends TlsLinkFixture
{
    /** Room for eight connections in their handshake, so that a test can fill it. */
    private static final ConnectionLimits EIGHT_HANDSHAKES =
        new ConnectionLimits(256, 8, TimeUnit.SECONDS.toNanos(30), 1 << 26);
    /** An accepted connection's failure names the address it came from. */
    private static final Pattern ACCEPTED_FAILED =
        Pattern.compile("TLS with an accepted connection from /127\\.0\\.0\\.1:\\d+ failed: ");

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
        // Bytes that are not TLS are no certificate's fault: the hint says the peer does not speak TLS instead.
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
            .limits(EIGHT_HANDSHAKES);
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
            .limits(EIGHT_HANDSHAKES);
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
            // Each write goes out as it is made: with Nagle's algorithm a write could wait for the acknowledgement
            // of the one before, and the test's one poll below would find nothing of it, under load.
            socket.setTcpNoDelay(true);
            genuine.setTcpNoDelay(true);
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
