package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.FreePorts;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three member processes with member and tool secrets and the token-file client authenticator: a client with good
 * credentials works, one with a wrong token is rejected with the reason, a tool without the secret is refused, a
 * process claiming a member id without the secret is refused and the members' error logs ({@code tool errors})
 * say so.
 */
class SecurityIT
{
    @TempDir
    Path dir;

    @Test
    void onlyClientsMembersAndToolsThatProveWhoTheyAreGetIn() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            Files.writeString(dir.resolve("tokens.properties"), "alice=" + sha256Hex("wonderland") + "\n");
            cluster.configureAll("lockstep.client.authenticator", "token-file");
            cluster.configureAll("lockstep.client.tokens.file", "tokens.properties");
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                assertTrue(admin.awaitLeader(20_000) >= 0, "a leader, with tools holding the secret");
            }

            final int[] echoes = new int[1];
            try (ClusterClient alice = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> echoes[0]++,
                ClusterClient.Settings.DEFAULTS, "alice:wonderland".getBytes(StandardCharsets.US_ASCII)))
            {
                assertTrue(alice.awaitConnected(10_000), "good credentials open a session");
                final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
                assertTrue(alice.offer(message, 0, 64) >= 0);
                awaitPolling(alice, () -> echoes[0] == 1);
            }

            try (ClusterClient mallory = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> { },
                ClusterClient.Settings.DEFAULTS, "alice:guess".getBytes(StandardCharsets.US_ASCII)))
            {
                awaitPolling(mallory, mallory::isClosed);
                assertFalse(mallory.isConnected());
                assertEquals("authentication rejected: unknown principal or wrong token", mallory.closeReason());
            }

            try (AdminClient noSecret = new AdminClient(cluster.members()))
            {
                assertTrue(noSecret.status(2000).isEmpty(), "no member answers a tool without the secret");
                assertNotNull(noSecret.lastProblem());
                assertTrue(noSecret.lastProblem().contains("tool requests need the tool secret"),
                    noSecret.lastProblem());
            }

            // A process claiming to be member 1, without the secret, dials member 2 (members dial higher ids).
            // It listens elsewhere: the real member 1 holds that port.
            final List<Member> impostorView = new ArrayList<>(cluster.members());
            impostorView.set(1, new Member(1, "127.0.0.1", FreePorts.next(), true));
            try (TcpTransport impostor = new TcpTransport(1, impostorView, 1 << 20, 1 << 16, null,
                MemberProtocolShapes.create());
                AdminClient admin = cluster.adminClient())
            {
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                boolean refused = false;
                while (!refused)
                {
                    assertTrue(System.nanoTime() < deadline, "member 2 did not log the impostor within 10 s");
                    impostor.poll(System.nanoTime(), (f, b, o, l) -> { });
                    impostor.flush(System.nanoTime());
                    final AdminClient.Errors member2 = admin.errors(200).get(2);
                    refused = null != member2 && member2.recent().stream()
                        .anyMatch(e -> e.message().contains("claiming to be member 1"));
                }
            }
            final JavaProcess.Result errors = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "errors",
                "--config", cluster.config(0).toString());
            assertEquals(0, errors.exitCode(), errors.output());
            assertTrue(errors.output().contains("member=2 kind=identity"), errors.output());
            assertTrue(errors.output().contains("claiming to be member 1: it did not offer to prove the member " +
                "secret"), errors.output());
            assertTrue(errors.output().contains("kind=client-auth"), "the rejected client is logged: " +
                errors.output());
            assertTrue(errors.output().contains("kind=untrusted-request"), errors.output());
        }
    }

    private static void awaitPolling(final ClusterClient client, final BooleanSupplier condition)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "condition not reached in 10 s");
            if (0 == client.poll())
            {
                Thread.onSpinWait();
            }
        }
    }

    private static String sha256Hex(final String token) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(
            token.getBytes(StandardCharsets.US_ASCII)));
    }
}
