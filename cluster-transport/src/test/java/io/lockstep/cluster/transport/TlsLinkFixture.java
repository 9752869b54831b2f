package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the TLS tests share: certificates from two authorities, member and client transports on loopback that report
 * their problems to {@link #problems}, and a pump that polls them until a condition holds.
 */
abstract class TlsLinkFixture
{
    static final ClusterSecret MEMBER_SECRET = ClusterSecret.of(
        "the-member-secret-of-this-test".getBytes(StandardCharsets.US_ASCII));
    static final ClusterSecret TOOL_SECRET = ClusterSecret.of(
        "the-tool-secret-of-this-test!!".getBytes(StandardCharsets.US_ASCII));
    static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    // Static, set again by each test class as it starts: the classes run one after another, as the build runs them.
    @TempDir
    static Path dir;
    static Path certs;
    static Path otherCerts;

    final List<TcpTransport> transports = new ArrayList<>();
    /** Written by the transports' listeners and by the peer threads TlsHostileInputTest starts, read by the test. */
    final List<String> problems = new CopyOnWriteArrayList<>();
    final List<byte[]> received = new ArrayList<>();
    final List<Integer> senders = new ArrayList<>();
    long clockOffsetNs;

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

    static TlsFiles memberFiles(final Path from) throws IOException
    {
        return TlsFiles.load(from.resolve(DevCertificates.CERTIFICATE), from.resolve(DevCertificates.KEY),
            from.resolve(DevCertificates.AUTHORITY));
    }

    TcpTransport member(final int id, final List<Member> members, final TlsFiles files,
        final Set<LinkClass> encrypted)
    {
        return track(new TcpTransport(id, members, 1 << 20, 1 << 17, MEMBER_SECRET, ClientProtocolShapes.create())
            .problemListener(problems::add).toolSecret(TOOL_SECRET).tls(files, encrypted));
    }

    TcpTransport client(final List<Member> members, final TlsFiles files)
    {
        final TcpTransport client = new TcpTransport(-1, members, 1 << 17).problemListener(problems::add);
        if (null != files)
        {
            client.tls(files, EnumSet.of(LinkClass.CLIENTS));
        }
        return track(client);
    }

    TcpTransport track(final TcpTransport transport)
    {
        transports.add(transport);
        return transport;
    }

    static List<Member> members(final boolean firstVoting, final boolean secondVoting) throws IOException
    {
        return List.of(new Member(0, "127.0.0.1", freePort(), firstVoting),
            new Member(1, "127.0.0.1", freePort(), secondVoting));
    }

    void pumpUntil(final BooleanSupplier done, final TcpTransport... parties)
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

    void pump(final TcpTransport... parties)
    {
        final long now = System.nanoTime() + clockOffsetNs;
        for (final TcpTransport t : parties)
        {
            t.poll(now, this::onMessage);
            t.flush(now);
        }
    }

    void onMessage(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
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

    static UnsafeBuffer ingress(final long sequence, final byte[] payload)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[payload.length + 64]);
        new IngressEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).sessionId(1).sequence(sequence)
            .putPayload(payload, 0, payload.length);
        return buffer;
    }

    static byte[] payload(final int seed, final int length)
    {
        final byte[] payload = new byte[length];
        for (int i = 0; i < length; i++)
        {
            payload[i] = (byte)(seed * 31 + i);
        }
        return payload;
    }

    static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
