package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.testkit.LocalCluster;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An attacker on the network against three member processes (cluster secret on), while a genuine client runs at
 * 1,000 messages a second: the handshake message that once stopped a member, sent again and again to every member,
 * and messages aimed at the edges of the transport's buffers and checks (cut short, wrong block lengths, straddling
 * the pre-handshake buffer, coalesced). Every member must stay up with its term unchanged, the genuine client must
 * lose and duplicate nothing, and the members' memory must stay bounded. Prints the genuine client's latency during
 * the attack and each member's resident memory before and after.
 */
class HostileNetworkIT
{
    private static final int RATE = 1_000;
    private static final long ATTACK_MS = 8_000;

    @TempDir
    Path dir;

    @Test
    void anAttackerWithoutCredentialsStopsNoMemberAndDisturbsNoClient() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                final Map<Integer, AdminClient.Status> before = admin.awaitConverged(20_000);
                assertNotNull(before, "converged before the attack");
                final long[] rssBefore = rss(cluster);

                final EchoWorkload genuine = new EchoWorkload(RATE);
                try (ClusterClient client = ClusterClient.connect(cluster.members(), genuine))
                {
                    genuine.client(client);
                    assertTrue(client.awaitConnected(10_000), "the genuine client connects");
                    genuine.runFor(1_000);
                    genuine.latencies().reset();
                    // The same client without an attacker, for comparison on this machine at this hour.
                    genuine.runFor(ATTACK_MS / 2);
                    final Histogram quiet = genuine.latencies().copy();
                    genuine.latencies().reset();

                    final Attacker attacker = new Attacker(cluster.members());
                    final Thread thread = new Thread(attacker, "attacker");
                    thread.start();
                    genuine.runFor(ATTACK_MS);
                    attacker.stop.set(true);
                    thread.join(10_000);
                    assertNull(attacker.failure.get(), "the attacker's own code failed");
                    final Histogram during = genuine.latencies().copy();
                    genuine.finishAndCheck(20_000, "genuine client under attack");

                    final Map<Integer, AdminClient.Status> after = admin.awaitConverged(20_000);
                    assertNotNull(after, "every member answers and agrees after the attack");
                    for (int i = 0; i < 3; i++)
                    {
                        final int member = i;
                        assertTrue(ProcessHandle.of(cluster.pid(i)).map(ProcessHandle::isAlive).orElse(false),
                            "member " + i + " is still running\n" + cluster.output(i));
                        assertEquals(before.get(i).term(), after.get(i).term(), () -> "member " + member +
                            ": no election during the attack\n" + cluster.output(member));
                    }
                    final long[] rssAfter = rss(cluster);
                    for (int i = 0; i < 3; i++)
                    {
                        assertTrue(rssAfter[i] < rssBefore[i] + 512L * 1024 * 1024, "member " + i +
                            " memory bounded: " + rssBefore[i] + " -> " + rssAfter[i] + " KiB");
                    }
                    System.out.printf("hostile network: %d attack connections, %d attack bytes over %d ms; " +
                        "genuine client at %d msg/s: %d messages, lost 0, duplicated 0; latency without the " +
                        "attacker %s; during the attack %s; member RSS before %s KiB, after %s KiB%n",
                        attacker.connections.get(), attacker.bytes.get(), ATTACK_MS, RATE, genuine.sent(),
                        percentiles(quiet), percentiles(during), Arrays.toString(rssBefore),
                        Arrays.toString(rssAfter));
                }
            }
        }
    }

    private static String percentiles(final Histogram h)
    {
        return String.format("p50 %d us, p99 %d us, p99.9 %d us, max %d us", h.getValueAtPercentile(50) / 1000,
            h.getValueAtPercentile(99) / 1000, h.getValueAtPercentile(99.9) / 1000, h.getMaxValue() / 1000);
    }

    /** Resident memory of each member process, in KiB, from /proc. */
    private static long[] rss(final LocalCluster cluster) throws IOException
    {
        final long[] kib = new long[3];
        for (int i = 0; i < 3; i++)
        {
            for (final String line : Files.readAllLines(Path.of("/proc/" + cluster.pid(i) + "/status")))
            {
                if (line.startsWith("VmRSS:"))
                {
                    kib[i] = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        }
        return kib;
    }

    /** Sends, until stopped, each attack in turn to each member, one connection per attack. */
    private static final class Attacker implements Runnable
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong connections = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final List<Member> members;
        private final Random random = new Random(29);

        Attacker(final List<Member> members)
        {
            this.members = members;
        }

        public void run()
        {
            try
            {
                while (!stop.get())
                {
                    for (final Member member : members)
                    {
                        send(member, HostileBytes.helloFillingThePreHandshakeBufferThenAShortProof());
                        send(member, straddlingGarbage());
                    }
                }
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
        }

        /** A plain Hello, whole messages up to the end of the pre-handshake buffer, then one cut across it. */
        private byte[] straddlingGarbage()
        {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(HostileBytes.frame(HostileBytes.hello(-1, false)));
            final int boundary = HostileBytes.PRE_HANDSHAKE_BUFFER - 40 + random.nextInt(80);
            while (out.size() < boundary)
            {
                out.writeBytes(HostileBytes.frame(HostileBytes.keepAlive(random.nextInt(1000))));
            }
            final byte[] keepAlive = HostileBytes.keepAlive(1);
            out.writeBytes(HostileBytes.frame(Arrays.copyOf(keepAlive, random.nextInt(keepAlive.length))));
            return out.toByteArray();
        }

        private void send(final Member member, final byte[] attack)
        {
            try (SocketChannel channel = SocketChannel.open(new InetSocketAddress(member.host(), member.port())))
            {
                connections.incrementAndGet();
                final ByteBuffer out = ByteBuffer.wrap(attack);
                while (out.hasRemaining())
                {
                    channel.write(out);
                }
                bytes.addAndGet(attack.length);
                // Wait for the member to hang up (bounded): the attack is one connection at a time.
                channel.socket().setSoTimeout(2_000);
                final ByteBuffer sink = ByteBuffer.allocate(4096);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (System.nanoTime() < deadline && channel.socket().getInputStream().read(sink.array()) >= 0)
                {
                    Thread.onSpinWait();
                }
            }
            catch (final IOException ex)
            {
                // Refused or hung up on: what a member should do.
            }
        }
    }
}
