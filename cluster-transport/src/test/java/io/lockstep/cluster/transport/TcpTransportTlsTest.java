package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.IngressEncoder;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TLS on each link class, between real transports on loopback: what each class requires, what each side proves, and
 * what is refused, with the reason.
 */
class TcpTransportTlsTest extends TlsLinkFixture
{
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
    void aTlsPeerOfAMemberWithoutTlsFilesIsToldWhy() throws IOException
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true));
        final TcpTransport m = track(new TcpTransport(0, members, 1 << 20, 1 << 16, MEMBER_SECRET,
            ClientProtocolShapes.create()).problemListener(problems::add));
        final TcpTransport client = client(members, TlsFiles.trusting(certs.resolve(DevCertificates.AUTHORITY)));
        pumpUntil(() -> problems.stream().anyMatch(p -> p.contains("this member has no TLS files")), m, client);
    }
}
