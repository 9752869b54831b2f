package io.lockstep.consensus.node;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.ClusterSecret;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * What a member does before it serves in a JVM without {@code -XX:PerMethodTrapLimit=0} (see {@link JitSettings}):
 * runs a throwaway three-member cluster in this process, on loopback, under a client's load, through what a member
 * meets rarely but on its hot paths: segment rollovers (every 64 KiB here), snapshots, timers, a leader that stops,
 * a client that resends to the next leader, sessions that open and close. The JIT then compiles the member's code
 * having seen those branches taken, as the flag would have it do, instead of leaving them out and falling back to
 * the interpreter the first time one is taken under real load.
 * <p>
 * The rehearsal members are the member's own classes with its durability and threading, a service of their own
 * ({@link RehearsalService}), and a temporary directory deleted afterwards. It runs once per JVM, costs a few
 * seconds of CPU at start, and cannot fail a member: an error is reported, and the member starts as it would have.
 * While it runs, the {@code io.lockstep} logger is quiet (its level is put back afterwards), so that a throwaway
 * cluster's elections do not read as the member's.
 */
final class JitRehearsal
{
    private static final System.Logger LOGGER = System.getLogger(JitRehearsal.class.getName());
    /**
     * Load before and after the leader stops lasts until the JIT has compiled nothing for {@link #QUIET_NS}: on a
     * busy machine the JIT profiles late (it compiles without profiling while its queue is long), and the rare
     * branches must be taken while it profiles. At least {@link #MIN_PHASE_NS}, at most {@link #MAX_PHASE_NS}.
     */
    private static final long MIN_PHASE_NS = TimeUnit.MILLISECONDS.toNanos(2000);
    private static final long MAX_PHASE_NS = TimeUnit.SECONDS.toNanos(4);
    private static final long QUIET_NS = TimeUnit.MILLISECONDS.toNanos(300);
    /** Bound on the whole rehearsal, elections and a stuck client included. */
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(30);
    private static final int SEGMENT_LENGTH = 64 * 1024;
    private static final int MAX_IN_FLIGHT = 32;
    private static final int[] MESSAGE_LENGTHS = { 32, 288, 1000, 64, 4000, 288, 128, 288 };
    /** How long each session of the second client lasts (see {@link #churn}). */
    private static final long CHURN_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private final List<ClusterNode> members = new ArrayList<>();
    private final AtomicInteger snapshots = new AtomicInteger();
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[4096]);
    private long answered;
    private long bytesSent;
    private String endpoints;
    private ClusterClient churn;
    private long churnSince;
    private int sessions;

    /** What a rehearsal went through: rollovers are counted from the bytes sent, so they are a lower bound. */
    record Outcome(long messages, int snapshots, long rollovers, int sessions)
    {
    }

    private JitRehearsal()
    {
    }

    /**
     * Rehearse with the settings of the member about to start.
     *
     * @param like the member's configuration: its durability and threading are rehearsed.
     * @return what it went through, or null if it failed (reported as a warning).
     */
    static Outcome run(final NodeConfig like)
    {
        final Logger lockstep = Logger.getLogger("io.lockstep");
        final Level level = lockstep.getLevel();
        final long start = System.nanoTime();
        Path dir = null;
        final JitRehearsal rehearsal = new JitRehearsal();
        try
        {
            dir = Files.createTempDirectory("lockstep-jit-rehearsal");
            lockstep.setLevel(Level.OFF);
            return rehearsal.rehearse(like, dir, start);
        }
        catch (final Exception ex)
        {
            lockstep.setLevel(level);
            LOGGER.log(System.Logger.Level.WARNING, "the JIT rehearsal failed, so the member starts without it " +
                "(expect stalls the first time it meets a rollover, a snapshot or a failover under load): " + ex);
            return null;
        }
        finally
        {
            if (null != rehearsal.churn)
            {
                rehearsal.churn.close();
            }
            rehearsal.members.forEach(ClusterNode::close);
            // The throwaway members' direct buffers are returned when they are collected: now, before the member
            // serves, rather than in a collection under load.
            System.gc();
            lockstep.setLevel(level);
            if (null != dir)
            {
                deleteQuietly(dir);
            }
        }
    }

    private Outcome rehearse(final NodeConfig like, final Path dir, final long start) throws Exception
    {
        final long deadline = start + DEADLINE_NS;
        final byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        final int[] ports = { freePort(), freePort(), freePort() };
        final StringBuilder list = new StringBuilder();
        for (int id = 0; id < 3; id++)
        {
            list.append(0 == id ? "" : ",").append(id).append("=127.0.0.1:").append(ports[id]);
        }
        endpoints = list.toString();
        for (int id = 0; id < 3; id++)
        {
            final ClusterNodeBuilder builder = ClusterNode.builder().memberId(id)
                .set(NodeConfig.MEMBERS, endpoints)
                .dataDir(dir.resolve("member" + id))
                .service(() -> new RehearsalService(snapshots))
                .secret(ClusterSecret.of(secret))
                .durability(like.durability())
                // A spinning member would starve the other two on a small machine.
                .idle("spin".equals(like.idle().strategy()) ? "yield" : like.idle().strategy())
                .dedicatedServiceThread(like.threading().dedicated())
                .snapshotIntervalBytes(64L * SEGMENT_LENGTH)
                .set(NodeConfig.SEGMENT_LENGTH, Integer.toString(SEGMENT_LENGTH))
                .set(NodeConfig.MAX_BATCH, Integer.toString(SEGMENT_LENGTH / 2));
            members.add(ClusterNode.startRehearsalMember(builder.config(), () -> new RehearsalService(snapshots)));
        }

        long sent = 0;
        final int firstLeader;
        try (ClusterClient client = ClusterClient.connect(endpoints,
            (sessionId, sequence, buffer, offset, length) -> answered++))
        {
            await(client.awaitConnected(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())), client,
                "connect");
            sent = load(client, sent, deadline);
            // Elections under this load on a small machine are not rare: wait for the client to know its leader.
            while (client.leaderId() < 0)
            {
                await(System.nanoTime() < deadline, client, "know its leader");
                client.poll();
            }
            firstLeader = client.leaderId();
            members.get(firstLeader).close();
            sent = load(client, sent, deadline);
            while (answered < sent)
            {
                await(System.nanoTime() < deadline, client, "hear every answer (" + answered + " of " + sent + ")");
                client.poll();
            }
            await(client.leaderId() != firstLeader, client, "fail over");
        }
        return new Outcome(sent, snapshots.get(), bytesSent / SEGMENT_LENGTH, sessions);
    }

    /**
     * Offer messages of mixed lengths, at most {@link #MAX_IN_FLIGHT} unanswered, for a phase (see
     * {@link #MIN_PHASE_NS}).
     *
     * @return messages sent so far.
     */
    private long load(final ClusterClient client, final long sentBefore, final long deadline)
    {
        final long start = System.nanoTime();
        long sent = sentBefore;
        long compileMs = compilationMs();
        long compiledAt = start;
        long now = start;
        while (now - start < MIN_PHASE_NS || (now - compiledAt < QUIET_NS && now - start < MAX_PHASE_NS))
        {
            await(now < deadline && !client.isClosed(), client, "keep sending");
            if (sent - answered < MAX_IN_FLIGHT)
            {
                final int length = MESSAGE_LENGTHS[(int)(sent & (MESSAGE_LENGTHS.length - 1))];
                message.putLong(0, sent);
                if (client.offer(message, 0, length) >= 0)
                {
                    sent++;
                    bytesSent += length;
                    continue;
                }
            }
            client.poll();
            now = System.nanoTime();
            churn(now);
            final long compiled = compilationMs();
            if (compiled != compileMs)
            {
                compileMs = compiled;
                compiledAt = now;
            }
        }
        return sent;
    }

    /**
     * A second client that opens a session, sends a message and goes, again and again: connections that open and
     * end, and sessions that open and close, taken while the JIT profiles rather than once at the end.
     */
    private void churn(final long now)
    {
        if (null == churn)
        {
            churn = ClusterClient.connect(endpoints, (sessionId, sequence, buffer, offset, length) -> { });
            churnSince = now;
            return;
        }
        churn.poll();
        if (now - churnSince > CHURN_NS)
        {
            if (churn.isConnected())
            {
                churn.offer(message, 0, Long.BYTES);
                churn.poll();
                sessions++;
            }
            churn.close();
            churn = null;
        }
    }

    /**
     * @return milliseconds the JIT has spent compiling in this JVM, or 0 if it does not say (then each phase lasts its
     * minimum).
     */
    private static long compilationMs()
    {
        final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return null != jit && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    private static void await(final boolean done, final ClusterClient client, final String what)
    {
        if (!done)
        {
            throw new IllegalStateException("the rehearsal's client could not " + what + " in time (" +
                client.closeReason() + ")");
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    private static void deleteQuietly(final Path dir)
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        catch (final IOException | RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot delete the JIT rehearsal's directory " + dir + ": " + ex);
        }
    }
}
