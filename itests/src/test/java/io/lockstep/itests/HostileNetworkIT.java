package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.SessionEventDecoder;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.FreePorts;
import io.lockstep.localcluster.LocalCluster;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An attacker on the network against three member processes (member and tool secrets on, clients under the default
 * accept-all), while a genuine client runs at 1,000 messages a second. The attacker, at once:
 * <ul>
 *   <li>sends the handshake message that once stopped a member, again and again to every member, and messages aimed
 *       at the edges of the transport's buffers and checks (cut short, straddling the pre-handshake buffer);</li>
 *   <li>floods the members with session opens;</li>
 *   <li>guesses: resumes every session id from 1 up with random secrets;</li>
 *   <li>holds hundreds of connections open after their Hello, saying nothing;</li>
 *   <li>holds the tool secret (a tool host's credential) and uses it to claim a member's id, and as a tool to send a
 *       {@code ConfigurationNotice} that would remove the members from the configuration.</li>
 * </ul>
 * Every member must stay up with its term and configuration unchanged, the genuine client must lose and duplicate
 * nothing and keep its session, and the members' memory must stay bounded. Prints the genuine client's latency
 * without and with the attacker, and each member's resident memory before and after.
 */
class HostileNetworkIT
{
    private static final int RATE = 1_000;
    private static final long ATTACK_MS = 8_000;
    /**
     * A pause between the attackers' rounds, us ({@code -Dlockstep.attack.pauseUs}); 0 (the default) sends as fast as
     * the attackers' threads can. On a machine where attacker and members share the cores, a pause separates what
     * the members' defences cost from what the attackers' own CPU takes from the members.
     */
    private static final long PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(Long.getLong("lockstep.attack.pauseUs", 0));

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

                    final long genuineSession = client.sessionId();
                    final Attacker attacker = new Attacker(cluster.members());
                    final SessionAttacker sessions = new SessionAttacker(cluster.members());
                    final IdentityAttacker identity = new IdentityAttacker(cluster.members(), cluster.toolSecret());
                    // -Dlockstep.attack.only=garbage|sessions|identity runs one attacker alone, to see what each costs.
                    final String only = System.getProperty("lockstep.attack.only", "");
                    assertTrue(List.of("", "garbage", "sessions", "identity").contains(only),
                        "lockstep.attack.only is garbage, sessions or identity, not " + only);
                    final List<Thread> threads = new ArrayList<>();
                    if (only.isEmpty() || only.equals("garbage"))
                    {
                        threads.add(new Thread(attacker, "attacker"));
                    }
                    if (only.isEmpty() || only.equals("sessions"))
                    {
                        threads.add(new Thread(sessions, "session-attacker"));
                    }
                    if (only.isEmpty() || only.equals("identity"))
                    {
                        threads.add(new Thread(identity, "identity-attacker"));
                    }
                    threads.forEach(Thread::start);
                    genuine.runFor(ATTACK_MS);
                    attacker.stop.set(true);
                    sessions.stop.set(true);
                    identity.stop.set(true);
                    for (final Thread thread : threads)
                    {
                        thread.join(10_000);
                    }
                    assertNull(attacker.failure.get(), "the attacker's own code failed");
                    assertNull(sessions.failure.get(), "the session attacker's own code failed");
                    assertNull(identity.failure.get(), "the identity attacker's own code failed");
                    assertEquals(genuineSession, client.sessionId(), "the genuine client kept its session");
                    if (only.isEmpty() || only.equals("sessions"))
                    {
                        assertTrue(sessions.refusedOpens.get() > 0, "the open flood met a bound");
                        assertTrue(sessions.rejectedResumes.get() > 0, "guessed resumes were answered with a refusal");
                    }
                    if (only.isEmpty() || only.equals("garbage"))
                    {
                        assertTrue(attacker.connections.get() > 0, "the garbage attacker ran");
                    }
                    if (only.isEmpty() || only.equals("identity"))
                    {
                        assertTrue(identity.claims.get() > 0, "the identity attacker ran");
                    }
                    assertFalse(identity.posedAsMember.get(), "the tool secret let no one pass as a member");
                    assertEquals(0, sessions.resumed.get(), "no guessed resume was accepted");
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
                        assertEquals(before.get(i).voters(), after.get(i).voters(), "member " + i + ": the voters");
                        assertEquals(before.get(i).configEpoch(), after.get(i).configEpoch(), "member " + i +
                            ": the configuration epoch");
                    }
                    final long[] rssAfter = rss(cluster);
                    for (int i = 0; i < 3; i++)
                    {
                        assertTrue(rssAfter[i] < rssBefore[i] + 512L * 1024 * 1024, "member " + i +
                            " memory bounded: " + rssBefore[i] + " -> " + rssAfter[i] + " KiB");
                    }
                    System.out.printf("hostile network (attackers' pause %d us): %d garbage connections (%d bytes), " +
                        "%d session opens " +
                        "(%d refused at a bound, %d opened), %d guessed resumes (%d refused, 0 accepted), %d idle " +
                        "connections after Hello held, %d duty cycles claiming a member's id and %d forged notices " +
                        "sent as a tool with the tool secret, over %d ms; genuine client at %d msg/s: %d messages, " +
                        "lost 0, duplicated 0, same " +
                        "session; latency without the attacker %s; during the attack %s; member RSS before %s KiB, " +
                        "after %s KiB%n",
                        TimeUnit.NANOSECONDS.toMicros(PAUSE_NS), attacker.connections.get(), attacker.bytes.get(),
                        sessions.opens.get(),
                        sessions.refusedOpens.get(), sessions.opened.get(), sessions.resumes.get(),
                        sessions.rejectedResumes.get(), sessions.idleHeld.get(), identity.claims.get(),
                        identity.notices.get(), ATTACK_MS, RATE, genuine.sent(), percentiles(quiet),
                        percentiles(during), Arrays.toString(rssBefore), Arrays.toString(rssAfter));
                }
            }
        }
    }

    private static void pause()
    {
        if (PAUSE_NS > 0)
        {
            LockSupport.parkNanos(PAUSE_NS);
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

    /**
     * Session attacks through the client protocol: a flood of opens on a few connections, resumes of every session id
     * with random secrets, and idle connections held after their Hello.
     */
    private static final class SessionAttacker implements Runnable
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong opens = new AtomicLong();
        final AtomicLong refusedOpens = new AtomicLong();
        final AtomicLong opened = new AtomicLong();
        final AtomicLong resumes = new AtomicLong();
        final AtomicLong rejectedResumes = new AtomicLong();
        final AtomicLong resumed = new AtomicLong();
        final AtomicLong idleHeld = new AtomicLong();
        private final List<Member> members;
        private final Random random = new Random(30);

        SessionAttacker(final List<Member> members)
        {
            this.members = members;
        }

        public void run()
        {
            final List<SocketChannel> idle = new ArrayList<>();
            try
            {
                final List<RawClient> clients = new ArrayList<>();
                for (final Member member : members)
                {
                    for (int i = 0; i < 3; i++)
                    {
                        clients.add(new RawClient(member));
                    }
                }
                long correlationId = 1;
                while (!stop.get())
                {
                    for (final RawClient raw : clients)
                    {
                        raw.send(HostileBytes.sessionOpen(correlationId++));
                        opens.incrementAndGet();
                        final long guess = 1 + random.nextInt(64);
                        raw.send(HostileBytes.sessionResume(correlationId++, guess, random.nextLong(),
                            random.nextLong()));
                        resumes.incrementAndGet();
                        raw.drain(this::onEvent);
                    }
                    pause();
                    if (idle.size() < 300)
                    {
                        final Member member = members.get(idle.size() % members.size());
                        final SocketChannel channel = SocketChannel.open(new InetSocketAddress(member.host(),
                            member.port()));
                        channel.write(ByteBuffer.wrap(HostileBytes.frame(HostileBytes.hello(-1, false))));
                        idle.add(channel);
                        idleHeld.set(idle.size());
                    }
                }
                for (final RawClient raw : clients)
                {
                    raw.close();
                }
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
            finally
            {
                for (final SocketChannel channel : idle)
                {
                    try
                    {
                        channel.close();
                    }
                    catch (final IOException ignore)
                    {
                        // Closing our own socket.
                    }
                }
            }
        }

        private void onEvent(final String code, final boolean isResume)
        {
            switch (code)
            {
                case "REFUSED" -> refusedOpens.incrementAndGet();
                case "AUTHENTICATION_REJECTED" -> rejectedResumes.incrementAndGet();
                case "OK" ->
                {
                    if (isResume)
                    {
                        resumed.incrementAndGet();
                    }
                    else
                    {
                        opened.incrementAndGet();
                    }
                }
                default ->
                {
                    // REDIRECT from a follower, CLOSED for an id closed: nothing gained either way.
                }
            }
        }
    }

    /**
     * Holds the tool secret, as a tool host does: claims member 0's id with it (dialling members 1 and 2), and as a
     * tool sends every member a ConfigurationNotice of a newer epoch whose voters leave the members out.
     */
    private static final class IdentityAttacker implements Runnable
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        /** Duty cycles spent claiming member 0's id. */
        final AtomicLong claims = new AtomicLong();
        final AtomicBoolean posedAsMember = new AtomicBoolean();
        final AtomicLong notices = new AtomicLong();
        private final List<Member> members;
        private final ClusterSecret toolSecret;

        IdentityAttacker(final List<Member> members, final ClusterSecret toolSecret)
        {
            this.members = members;
            this.toolSecret = toolSecret;
        }

        public void run()
        {
            final List<Member> posingView = new ArrayList<>(members);
            try
            {
                // It listens elsewhere: the real member 0 holds that port.
                posingView.set(0, new Member(0, "127.0.0.1", FreePorts.next(), true));
            }
            catch (final IOException ex)
            {
                failure.set(ex);
                return;
            }
            try (TcpTransport posing = new TcpTransport(
                    0, posingView, 1 << 20, 1 << 16, toolSecret, MemberProtocolShapes.create());
                TcpTransport tool = new TcpTransport(
                    -1, members, 0, 1 << 16, toolSecret, MemberProtocolShapes.create()))
            {
                final UnsafeBuffer notice = HostileBytes.configurationNotice(0, 99, 1L << 5);
                while (!stop.get())
                {
                    posing.poll(System.nanoTime(), (f, b, o, l) -> { });
                    tool.poll(System.nanoTime(), (f, b, o, l) -> { });
                    for (final Member member : members)
                    {
                        if (tool.send(member.id(), notice, 0, notice.capacity()))
                        {
                            notices.incrementAndGet();
                        }
                        if (member.id() != 0 && posing.isConnected(member.id()))
                        {
                            posedAsMember.set(true);
                            posing.send(member.id(), notice, 0, notice.capacity());
                        }
                    }
                    claims.incrementAndGet();
                    posing.flush(System.nanoTime());
                    tool.flush(System.nanoTime());
                    LockSupport.parkNanos(Math.max(PAUSE_NS, TimeUnit.MILLISECONDS.toNanos(5)));
                }
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
        }
    }

    /** A plain client connection (Hello without authentication) that sends raw client-protocol messages. */
    private static final class RawClient
    {
        private final SocketChannel channel;
        private final ByteBuffer in = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        private final Set<Long> resumeIds = new HashSet<>();

        RawClient(final Member member) throws IOException
        {
            channel = SocketChannel.open(new InetSocketAddress(member.host(), member.port()));
            channel.write(ByteBuffer.wrap(HostileBytes.frame(HostileBytes.hello(-1, false))));
            channel.configureBlocking(false);
        }

        void send(final byte[] message) throws IOException
        {
            final UnsafeBuffer view = new UnsafeBuffer(message);
            if (view.getShort(2, ByteOrder.LITTLE_ENDIAN) == 1 &&
                view.getLong(16, ByteOrder.LITTLE_ENDIAN) >= 0)
            {
                resumeIds.add(view.getLong(8, ByteOrder.LITTLE_ENDIAN));
            }
            final ByteBuffer out = ByteBuffer.wrap(HostileBytes.frame(message));
            while (out.hasRemaining())
            {
                if (channel.write(out) < 0)
                {
                    return;
                }
            }
        }

        void drain(final BiConsumer<String, Boolean> onEvent) throws IOException
        {
            if (channel.read(in) < 0)
            {
                throw new IOException("a member hung up on a plain client");
            }
            in.flip();
            final MessageHeaderDecoder header =
                new MessageHeaderDecoder();
            final SessionEventDecoder event =
                new SessionEventDecoder();
            final UnsafeBuffer view = new UnsafeBuffer(in);
            while (in.remaining() >= 4 && in.remaining() >= 4 + in.getInt(in.position()))
            {
                final int length = in.getInt(in.position());
                final int at = in.position() + 4;
                header.wrap(view, at);
                if (SessionEventDecoder.TEMPLATE_ID == header.templateId())
                {
                    event.wrapAndApplyHeader(view, at, header);
                    onEvent.accept(event.code().name(), resumeIds.contains(event.correlationId()));
                }
                in.position(at + length);
            }
            in.compact();
        }

        void close() throws IOException
        {
            channel.close();
        }
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
                    pause();
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
