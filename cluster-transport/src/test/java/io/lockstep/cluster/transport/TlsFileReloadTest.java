package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member's TLS files: new ones taken for new connections without a restart, and files that do not hold what a
 * member needs refused with the reason.
 */
class TlsFileReloadTest extends TlsLinkFixture
{
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
}
