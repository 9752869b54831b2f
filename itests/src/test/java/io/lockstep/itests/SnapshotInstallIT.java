package io.lockstep.itests;

import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.node.ThreadingSettings;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.kv.KeyValueClient;
import io.lockstep.examples.kv.KeyValueService;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three member processes running the key-value store with small log segments (1 MiB) and an automatic snapshot
 * every 2 MiB of log, keeping 2. Clients write until several snapshots and purges have happened on every member; the
 * tool asks for one more; then one follower is killed with SIGKILL, its data directory deleted, and it is started
 * again, empty. It must rejoin through install-snapshot and reach the same applied position and state hash as the
 * others. Writing goes on until the leader has taken 12 snapshots (about 24 MiB of log through 1 MiB segments;
 * {@code -Dlockstep.snapshot.it.snapshots=N} for a longer run), and throughout every member's log stays under the
 * stated bound, with at most one segment being deleted beside it.
 */
class SnapshotInstallIT
{
    private static final int SEGMENT = 1 << 20;
    private static final long INTERVAL = 2L << 20;
    private static final int KEEP = 2;
    /**
     * The bound NodeConfig states, in segments: keep * interval + 2 segments, plus one segment for the snapshot in
     * flight; and the log's control files beside them (descriptor and promise, about 1 KiB). A log at exactly that
     * many segments is within the bound, which the count without the control files once missed by 1,064 bytes.
     */
    private static final long LOG_BOUND = KEEP * INTERVAL + 3L * SEGMENT + 4096;
    /**
     * A purged segment is renamed out of the log to this suffix and cut a step at a time before it is unlinked
     * (archive-log's SegmentFiles.deleteGradually); until then it takes disk space beside the log, one at a time.
     */
    private static final String PURGING_SUFFIX = ".seg.purging";

    @TempDir
    Path dir;

    /** Both threading modes: in DEDICATED the service runs on a thread of its own (see ThreadingSettings). */
    @ParameterizedTest(name = "lockstep.threading={0}")
    @ValueSource(strings = { "shared", "dedicated" })
    void aWipedMemberRejoinsThroughInstallSnapshotAndTheLogStaysBounded(final String threading) throws Exception
    {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong failures = new AtomicLong();
        final AtomicLong ops = new AtomicLong();
        final long[][] maxLogBytes = new long[3][3];
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", SEGMENT, KeyValueService.class.getName());
            AdminClient admin = cluster.adminClient())
        {
            cluster.configureAll(NodeConfig.SNAPSHOT_INTERVAL_BYTES, Long.toString(INTERVAL));
            cluster.configureAll(NodeConfig.SNAPSHOT_KEEP, Integer.toString(KEEP));
            // The bound checked is the one without the purge delay, which adds what is written while it runs.
            cluster.configureAll(NodeConfig.PURGE_DELAY_MS, "0");
            cluster.configureAll(ThreadingSettings.THREADING, threading);
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            final List<Thread> clients = startClients(cluster, stop, failures, ops);

            // Several automatic snapshots, and purges on every member.
            final long[] snapshotsSeen = new long[1];
            final long[] lastSnapshot = { -1 };
            awaitStatus(admin, cluster, maxLogBytes, 120, statuses ->
            {
                final AdminClient.Status leader = leader(statuses);
                if (null != leader && leader.snapshotPosition() > lastSnapshot[0])
                {
                    lastSnapshot[0] = leader.snapshotPosition();
                    snapshotsSeen[0]++;
                }
                return snapshotsSeen[0] >= 4 && statuses.size() == 3 &&
                    statuses.values().stream().allMatch(s -> s.logStartPosition() > 0);
            }, "4 snapshots seen on the leader and every member's log purged");

            // The operator's command, as a process: exit 0 once durable on the leader, printing the position.
            final JavaProcess.Result tool = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "snapshot",
                "--config",
                cluster.config(0).toString());
            assertEquals(0, tool.exitCode(), tool.output());
            final Matcher m = Pattern.compile("snapshot_position=(\\d+)")
                .matcher(tool.output());
            assertTrue(m.find(), tool.output());
            final long asked = Long.parseLong(m.group(1));
            assertTrue(asked > 0, "tool snapshot confirmed durable on the leader");

            final int leaderId = admin.awaitLeader(10_000);
            final int victim = (leaderId + 1) % 3;
            cluster.kill(victim);
            deleteTree(cluster.dataDir(victim));
            final long opsAtKill = ops.get();
            awaitOps(ops, opsAtKill + 500);
            cluster.start(victim);
            awaitOps(ops, ops.get() + 500);
            // Keep going: a longer run, many more snapshots and purges, the log bound sampled all the while.
            final int longRunSnapshots = Integer.getInteger("lockstep.snapshot.it.snapshots", 12);
            awaitStatus(admin, cluster, maxLogBytes, 180, statuses ->
            {
                final AdminClient.Status leader = leader(statuses);
                if (null != leader && leader.snapshotPosition() > lastSnapshot[0])
                {
                    lastSnapshot[0] = leader.snapshotPosition();
                    snapshotsSeen[0]++;
                }
                return snapshotsSeen[0] >= longRunSnapshots;
            }, longRunSnapshots + " snapshots seen on the leader");
            stop.set(true);
            for (final Thread t : clients)
            {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }

            final Map<Integer, AdminClient.Status> converged = awaitStatus(admin, cluster, maxLogBytes, 60,
                statuses -> statuses.size() == 3 &&
                    statuses.values().stream().map(AdminClient.Status::appliedPosition).distinct().count() == 1 &&
                    statuses.values().stream().allMatch(s -> s.appliedPosition() == s.commitPosition() &&
                        s.commitPosition() == s.logPosition()),
                "all three at the same applied position");
            final long hash = converged.get(leaderId).stateHash();
            for (final AdminClient.Status s : converged.values())
            {
                assertEquals(hash, s.stateHash(), "member " + s.memberId() + " holds the same state");
            }
            final AdminClient.Status rejoined = converged.get(victim);
            assertTrue(cluster.output(victim).contains("installed snapshot"), "member " + victim + " installed a " +
                "snapshot; output:\n" + cluster.output(victim));
            assertTrue(rejoined.logStartPosition() > 0, "the rejoined member's log starts at the installed snapshot");
            System.out.printf("snapshot install: %d operations, %d snapshots seen on the leader, tool snapshot at " +
                "%d, member %d wiped and rejoined at applied position %d with state hash %016x; " +
                "largest log directory per member [log, being deleted, whole] %s bytes (log bound %d)%n",
                ops.get(), snapshotsSeen[0], asked, victim, rejoined.appliedPosition(), hash,
                Arrays.deepToString(maxLogBytes), LOG_BOUND);
        }
        assertEquals(0, failures.get(), "clients ran without errors");
        for (int i = 0; i < 3; i++)
        {
            assertTrue(maxLogBytes[i][0] <= LOG_BOUND, "member " + i + " log (segments and control files) reached " +
                maxLogBytes[i][0] + " bytes, over the bound " + LOG_BOUND);
            assertTrue(maxLogBytes[i][1] <= SEGMENT, "member " + i + " held " + maxLogBytes[i][1] + " bytes of " +
                "segments being deleted at once; the purge thread deletes one at a time");
            assertTrue(maxLogBytes[i][2] <= LOG_BOUND + SEGMENT, "member " + i + " log directory reached " +
                maxLogBytes[i][2] + " bytes, over the bound " + (LOG_BOUND + SEGMENT));
        }
    }

    private static List<Thread> startClients(
        final LocalCluster cluster, final AtomicBoolean stop, final AtomicLong failures, final AtomicLong ops)
    {
        final List<Thread> threads = new ArrayList<>();
        final String value = "v".repeat(700);
        for (int c = 0; c < 4; c++)
        {
            final int clientId = c;
            final Thread t = new Thread(() ->
            {
                try (KeyValueClient client = new KeyValueClient(clientId, cluster.members()))
                {
                    if (!client.awaitConnected(20_000))
                    {
                        failures.incrementAndGet();
                        return;
                    }
                    int n = 0;
                    while (!stop.get())
                    {
                        client.put("k" + clientId + "-" + (n % 500), value + n, 10_000);
                        n++;
                        ops.incrementAndGet();
                    }
                }
                catch (final RuntimeException ex)
                {
                    failures.incrementAndGet();
                    ex.printStackTrace();
                }
            }, "kv-client-" + c);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    private interface StatusCondition
    {
        boolean test(Map<Integer, AdminClient.Status> statuses);
    }

    private static Map<Integer, AdminClient.Status> awaitStatus(
        final AdminClient admin, final LocalCluster cluster, final long[][] maxLogBytes, final int timeoutSeconds,
        final StatusCondition condition, final String what) throws IOException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true)
        {
            sampleLogSizes(cluster, maxLogBytes);
            final Map<Integer, AdminClient.Status> statuses = admin.status(500);
            if (condition.test(statuses))
            {
                return statuses;
            }
            assertTrue(System.nanoTime() < deadline, "not reached in " + timeoutSeconds + " s: " + what + "; " +
                "last status " + statuses);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private static AdminClient.Status leader(final Map<Integer, AdminClient.Status> statuses)
    {
        return statuses.values().stream().filter(s -> Role.LEADER == s.role())
            .findFirst().orElse(null);
    }

    /**
     * Largest sizes seen per member, in bytes: [0] the log (segments and control files), [1] a segment being
     * deleted (renamed out of the log, cut a step at a time), [2] the whole directory.
     */
    private static void sampleLogSizes(final LocalCluster cluster, final long[][] maxLogBytes) throws IOException
    {
        for (int i = 0; i < maxLogBytes.length; i++)
        {
            final Path logDir = cluster.logDir(i);
            if (!Files.isDirectory(logDir))
            {
                continue;
            }
            long log = 0;
            long purging = 0;
            try (Stream<Path> files = Files.list(logDir))
            {
                for (final Path f : (Iterable<Path>)files::iterator)
                {
                    try
                    {
                        final long size = Files.size(f);
                        if (f.getFileName().toString().endsWith(PURGING_SUFFIX))
                        {
                            purging += size;
                        }
                        else
                        {
                            log += size;
                        }
                    }
                    catch (final IOException ignore)
                    {
                        // Purged while being listed.
                    }
                }
            }
            catch (final NoSuchFileException ignore)
            {
                continue;
            }
            maxLogBytes[i][0] = Math.max(maxLogBytes[i][0], log);
            maxLogBytes[i][1] = Math.max(maxLogBytes[i][1], purging);
            maxLogBytes[i][2] = Math.max(maxLogBytes[i][2], log + purging);
        }
    }

    private static void awaitOps(final AtomicLong ops, final long count)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (ops.get() < count)
        {
            assertTrue(System.nanoTime() < deadline, "only " + ops.get() + " of " + count + " operations in 60 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    private static void deleteTree(final Path root) throws IOException
    {
        try (Stream<Path> files = Files.walk(root))
        {
            for (final Path p : (Iterable<Path>)files.sorted(Comparator.reverseOrder())::iterator)
            {
                Files.delete(p);
            }
        }
    }
}
