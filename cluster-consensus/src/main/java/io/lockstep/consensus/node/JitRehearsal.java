package io.lockstep.consensus.node;

import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.consensus.ConsensusConfig;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
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
 * ({@link RehearsalService}), a random member secret, an authenticator that lets in only the rehearsal's clients
 * (a random token), at most 16 client connections, and a temporary directory deleted afterwards (also if the process
 * is stopped meanwhile, short of a SIGKILL). It runs once per JVM, adds seconds to the start, and cannot fail a
 * member: any error, out-of-memory included, is reported, and the member starts as it would have. While it runs, the
 * {@code java.util.logging} level of {@code io.lockstep} is OFF (put back afterwards), so that a throwaway cluster's
 * elections do not read as the member's; other logging back ends, or loggers below it with levels of their own, still
 * show them.
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
    /**
     * The rehearsal members' ids, 60-62 (the highest ids there are), so that a line they log where logging is not
     * quieted ("member 61 is leader of term 1") does not read as the real member's, which is usually 0-2.
     */
    private static final int FIRST_ID = ConsensusConfig.MAX_MEMBERS - 3;
    private static final int MAX_IN_FLIGHT = 32;
    private static final int[] MESSAGE_LENGTHS = { 32, 288, 1000, 64, 4000, 288, 128, 288 };
    /** How long each session of the second client lasts (see {@link #churn}). */
    private static final long CHURN_NS = TimeUnit.MILLISECONDS.toNanos(400);

    /** Read by the shutdown hook too. */
    private final List<ClusterNode> members = new CopyOnWriteArrayList<>();
    private final AtomicInteger snapshots = new AtomicInteger();
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[4096]);
    private long answered;
    private long bytesSent;
    private String endpoints;
    private byte[] credentials;
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
     * Rehearse with the settings of the member about to start, in a directory of its own under
     * {@code java.io.tmpdir}.
     *
     * @param like the member's configuration: its durability and threading are rehearsed.
     * @return what it went through, or null if it failed (reported as a warning).
     */
    static Outcome run(final NodeConfig like)
    {
        return run(like, Path.of(System.getProperty("java.io.tmpdir")));
    }

    /**
     * @param parent where the rehearsal's directory goes.
     */
    static Outcome run(final NodeConfig like, final Path parent)
    {
        final Logger lockstep = Logger.getLogger("io.lockstep");
        final Level level = lockstep.getLevel();
        final JitRehearsal rehearsal = new JitRehearsal();
        Path dir = null;
        Thread cleanUpOnExit = null;
        Throwable failure = null;
        try
        {
            dir = Files.createTempDirectory(parent, "lockstep-jit-rehearsal");
            final Path created = dir;
            // A process stopped while it rehearses still removes the throwaway logs (a SIGKILL cannot): the members
            // first, which go on writing segments while they run, then their files.
            cleanUpOnExit = new Thread(() ->
            {
                rehearsal.closeAll();
                deleteQuietly(created);
            }, "lockstep-rehearsal-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanUpOnExit);
            lockstep.setLevel(Level.OFF);
            return rehearsal.rehearse(like, dir, System.nanoTime());
        }
        catch (final Throwable ex)
        {
            // Anything at all, out-of-memory included: the rehearsal is an optimisation, the member starts without it.
            // Said once the throwaway members are closed and logging is back, so that none of their lines follow it.
            failure = ex;
            return null;
        }
        finally
        {
            try
            {
                rehearsal.closeAll();
            }
            finally
            {
                lockstep.setLevel(level);
                // Best effort: the throwaway members' direct buffers are returned when collected, and that had
                // better happen now, before the member serves (a no-op under -XX:+DisableExplicitGC).
                System.gc();
                if (null != dir)
                {
                    deleteQuietly(dir);
                }
                removeHook(cleanUpOnExit);
                if (null != failure)
                {
                    LOGGER.log(System.Logger.Level.WARNING, "the JIT rehearsal failed, so the member starts without " +
                        "it (expect stalls the first time it meets a rollover, a snapshot or a failover under load): " +
                        failure);
                }
            }
        }
    }

    private synchronized void closeAll()
    {
        if (null != churn)
        {
            closeQuietly(churn);
            churn = null;
        }
        for (final ClusterNode member : members)
        {
            closeQuietly(member);
        }
    }

    private static void closeQuietly(final AutoCloseable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (final Throwable ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "closing part of the JIT rehearsal failed: " + ex);
        }
    }

    private static void removeHook(final Thread hook)
    {
        if (null == hook)
        {
            return;
        }
        try
        {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (final IllegalStateException ex)
        {
            // The JVM is shutting down already: the hook runs, and finds the directory gone.
        }
    }

    private Outcome rehearse(final NodeConfig like, final Path dir, final long start) throws Exception
    {
        final long deadline = start + DEADLINE_NS;
        final SecureRandom random = new SecureRandom();
        final byte[] secret = new byte[32];
        random.nextBytes(secret);
        // Only the rehearsal's own clients get in, whatever else on this host finds its ports.
        final byte[] token = new byte[32];
        random.nextBytes(token);
        credentials = token;
        final ClientAuthenticator onlyOurs = offered -> MessageDigest.isEqual(offered, token) ?
            ClientAuthenticator.Decision.accept("rehearsal") : ClientAuthenticator.Decision.reject("not a rehearsal");
        final int[] ports = freePorts();
        final Supplier<ClusteredService> service = () -> new RehearsalService(snapshots);
        final StringBuilder list = new StringBuilder();
        for (int i = 0; i < 3; i++)
        {
            list.append(0 == i ? "" : ",").append(FIRST_ID + i).append("=127.0.0.1:").append(ports[i]);
        }
        endpoints = list.toString();
        for (int i = 0; i < 3; i++)
        {
            final int id = FIRST_ID + i;
            final ClusterNodeBuilder builder = ClusterNode.builder().memberId(id)
                .set(NodeConfig.MEMBERS, endpoints)
                .dataDir(dir.resolve("member" + id))
                .service(service)
                .secret(ClusterSecret.of(secret))
                .authenticator(onlyOurs)
                .set(SecuritySettings.CLIENT_CONNECTIONS_MAX, "16")
                .durability(like.durability())
                // A spinning member would starve the other two on a small machine.
                .idle("spin".equals(like.idle().strategy()) ? "yield" : like.idle().strategy())
                .dedicatedServiceThread(like.threading().dedicated())
                .snapshotIntervalBytes(64L * SEGMENT_LENGTH)
                .set(NodeConfig.SEGMENT_LENGTH, Integer.toString(SEGMENT_LENGTH))
                .set(NodeConfig.MAX_BATCH, Integer.toString(SEGMENT_LENGTH / 2));
            members.add(ClusterNode.startRehearsalMember(builder.config(), service));
        }

        long sent = 0;
        final int firstLeader;
        try (ClusterClient client = ClusterClient.connect(endpoints,
            (sessionId, sequence, buffer, offset, length) -> answered++, ClusterClient.Settings.DEFAULTS, credentials,
            null))
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
            members.get(firstLeader - FIRST_ID).close();
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
            churn = ClusterClient.connect(endpoints, (sessionId, sequence, buffer, offset, length) -> { },
                ClusterClient.Settings.DEFAULTS, credentials, null);
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

    /**
     * @return three ports free a moment ago, all different (each socket stays open until all three are chosen).
     */
    private static int[] freePorts() throws IOException
    {
        try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            ServerSocket c = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return new int[]{ a.getLocalPort(), b.getLocalPort(), c.getLocalPort() };
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
