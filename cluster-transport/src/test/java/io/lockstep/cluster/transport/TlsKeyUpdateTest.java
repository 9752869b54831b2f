package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.Security;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS 1.3 renews its keys on a busy link (the JDK after 2^37 bytes by default): each side sends a key update and
 * the other answers one. Two members exchange messages both ways as fast as they can, with the key limit lowered
 * to 64 KiB so that keys are renewed hundreds of times, and every message arrives, in order: the bound on records
 * without data ({@link TlsLink#QUIET_RECORD_BURST}) does not cut off a busy genuine link. (At 16 KiB, one record,
 * the JDK's requests and answers come in bursts the bound can cut off, rarely: a limit 2^23 times lower than the
 * JDK's own.) The limit is read once per JVM, when the JDK's TLS classes load, so the exchange runs in a JVM of its
 * own ({@link #main}).
 */
class TlsKeyUpdateTest
{
    private static final int MESSAGES = 3000;

    @TempDir
    Path dir;

    @Test
    void messagesKeepFlowingBothWaysThroughHundredsOfKeyUpdates() throws Exception
    {
        DevCertificates.write(dir, List.of("127.0.0.1"));
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (arg.startsWith("--add-"))
            {
                command.add(arg);
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), TlsKeyUpdateTest.class.getName(),
            dir.toString()));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.contains("delivered " + MESSAGES + "/" + MESSAGES + " each way"), output);
    }

    /** The exchange, in a JVM whose key limit is lowered before any TLS class loads. */
    public static void main(final String[] args) throws Exception
    {
        Security.setProperty("jdk.tls.keyLimits",
            "AES/GCM/NoPadding KeyUpdate 2^16, ChaCha20-Poly1305 KeyUpdate 2^16");
        final Path dir = Path.of(args[0]);
        final TlsFiles files = TlsFiles.load(dir.resolve(DevCertificates.CERTIFICATE), dir.resolve(DevCertificates.KEY),
            dir.resolve(DevCertificates.AUTHORITY));
        final ClusterSecret secret = ClusterSecret.of("the-member-secret-of-this-test".getBytes(
            StandardCharsets.US_ASCII));
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true),
            new Member(1, "127.0.0.1", freePort(), true));
        final List<String> problems = new ArrayList<>();
        final long[] received = new long[2];
        final long[] last = { -1, -1 };
        final boolean[] outOfOrder = new boolean[1];
        final TcpTransport.MessageHandler handler = (endpoint, buffer, offset, length) ->
        {
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
            final IngressDecoder ingress = new IngressDecoder().wrap(buffer, offset
                + MessageHeaderDecoder.ENCODED_LENGTH,
                header.blockLength(), header.version());
            outOfOrder[0] |= ingress.sequence() != last[endpoint] + 1;
            last[endpoint] = ingress.sequence();
            received[endpoint]++;
        };
        final TcpTransport a = new TcpTransport(0, members, 1 << 20, 1 << 17, secret, ClientProtocolShapes.create())
            .problemListener(problems::add).tls(files, EnumSet.of(LinkClass.MEMBERS));
        final TcpTransport b = new TcpTransport(1, members, 1 << 20, 1 << 17, secret, ClientProtocolShapes.create())
            .problemListener(problems::add).tls(files, EnumSet.of(LinkClass.MEMBERS));
        final UnsafeBuffer message = new UnsafeBuffer(new byte[8192]);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int sentByA = 0;
        int sentByB = 0;
        while ((received[0] < MESSAGES || received[1] < MESSAGES) && System.nanoTime() < deadline &&
            problems.isEmpty())
        {
            while (a.isConnected(1) && sentByA < MESSAGES && a.send(1, ingress(message, sentByA, 1500 + sentByA % 1000),
                0, length(1500 + sentByA % 1000)))
            {
                sentByA++;
            }
            while (b.isConnected(0) && sentByB < MESSAGES && b.send(0, ingress(message, sentByB, 100 + sentByB % 3000),
                0, length(100 + sentByB % 3000)))
            {
                sentByB++;
            }
            final long now = System.nanoTime();
            a.poll(now, handler);
            a.flush(now);
            b.poll(now, handler);
            b.flush(now);
        }
        a.close();
        b.close();
        System.out.println("delivered " + Math.min(received[0], received[1]) + "/" + MESSAGES + " each way (a to b " +
            received[1] + ", b to a " + received[0] + "), out of order: " + outOfOrder[0] + ", problems: " + problems);
        System.exit(received[0] == MESSAGES && received[1] == MESSAGES && !outOfOrder[0] && problems.isEmpty() ? 0 : 1);
    }

    private static UnsafeBuffer ingress(final UnsafeBuffer buffer, final long sequence, final int payload)
    {
        new IngressEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).sessionId(1).sequence(sequence)
            .putPayload(new byte[payload], 0, payload);
        return buffer;
    }

    private static int length(final int payload)
    {
        return MessageHeaderEncoder.ENCODED_LENGTH + IngressEncoder.BLOCK_LENGTH + 4 + payload;
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
