package io.lockstep.examples.kv;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.localcluster.LocalCluster;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code bin/lockstep nemesis [--minutes 10] [--seed N]}: three member processes of the key-value example under
 * three clients doing gets, puts and compare-and-sets, while faults are injected one at a time, at random, for as long
 * as asked: a member killed (SIGKILL) and restarted, paused (SIGSTOP, then SIGCONT), cut off, its disk filled (each
 * member's data directory is a small tmpfs of its own), its disk made slow (each sync of its log waits 0.5-2 s), or
 * its wall clock stepped (by up to 10 minutes either way, and back when the fault ends). Members on one host share its
 * disk and clock, so the last two go through test-only keys of each member: {@code lockstep.test.slow.sync.file} and
 * {@code lockstep.test.clock.offset.file}. The cut is the kernel's packet filter dropping every
 * packet to and from the member's port: members dial the members of higher ids, so the member with the highest id,
 * whose every link is one it was dialled on, is the one cut off from all (and from clients). Each fault lasts
 * 1-3 s and is followed by 1-2 s of quiet. At the end the history is checked for linearizability, the service counts
 * anything applied twice, and it prints the faults of each kind, the operations, the verdict and the longest time
 * without a successful operation around each kind of fault. Exit 0 if linearizable and nothing was applied twice.
 * <p>
 * Partitions and full disks need root (the packet filter and the mounts); without it they are left out and the
 * summary says so.
 */
public final class Nemesis
{
    /** The kinds of fault, as the summary names them. */
    enum Fault
    {
        KILL("kill"), PAUSE("pause"), PARTITION("partition"), DISK_FULL("disk-full"), SLOW_DISK("slow-disk"),
        CLOCK_STEP("clock-step");

        private final String label;

        Fault(final String label)
        {
            this.label = label;
        }
    }

    private static final int MEMBERS = 3;
    private static final int CLIENTS = 3;
    private static final int KEYS = 3;
    /** Of this run only: two runs at once do not undo each other's rules. */
    private static final String CHAIN = "LOCKSTEP_NEMESIS_" + ProcessHandle.current().pid();
    private static final AtomicBoolean CLEANED = new AtomicBoolean();

    private final Random random;
    private final LocalCluster cluster;
    private final boolean root;
    private final Path dir;
    private final List<long[]> windows = Collections.synchronizedList(new ArrayList<>());
    private final List<Fault> windowKinds = Collections.synchronizedList(new ArrayList<>());
    private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);

    private Nemesis(final long seed, final LocalCluster cluster, final boolean root, final Path dir)
    {
        this.random = new Random(seed);
        this.cluster = cluster;
        this.root = root;
        this.dir = dir;
    }

    private static Path slowSyncFile(final Path dir, final int member)
    {
        return dir.resolve("slow-sync-" + member);
    }

    private static Path clockOffsetFile(final Path dir, final int member)
    {
        return dir.resolve("clock-offset-" + member);
    }

    public static void main(final String[] args) throws Exception
    {
        double minutes = 10;
        long seed = System.nanoTime();
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--minutes" -> minutes = Double.parseDouble(args[i + 1]);
                case "--seed" -> seed = Long.parseLong(args[i + 1]);
                default ->
                {
                    System.err.println("usage: lockstep nemesis [--minutes M] [--seed N]");
                    System.exit(2);
                }
            }
        }
        System.exit(run(minutes, seed));
    }

    /**
     * @return 0 if the history is linearizable and nothing was applied twice, else 1.
     */
    public static int run(final double minutes, final long seed) throws Exception
    {
        final boolean root = isRoot();
        final Path dir = Files.createTempDirectory("lockstep-nemesis");
        final List<Path> mounts = Collections.synchronizedList(new ArrayList<>());
        try (LocalCluster cluster = new LocalCluster(dir, MEMBERS, "batch", 1 << 20, KeyValueService.class.getName()))
        {
            // Snapshots keep each log small, so that a member's disk is a small filesystem of its own.
            cluster.configureAll(NodeConfig.SNAPSHOT_INTERVAL_BYTES, Long.toString(4L << 20));
            cluster.configureAll(NodeConfig.SNAPSHOT_KEEP, "2");
            cluster.configureAll(NodeConfig.PURGE_DELAY_MS, "0");
            for (int i = 0; i < MEMBERS; i++)
            {
                Files.writeString(cluster.config(i), NodeConfig.TEST_SLOW_SYNC_FILE + "=" + slowSyncFile(dir, i) +
                    "\n" + NodeConfig.TEST_CLOCK_OFFSET_FILE + "=" + clockOffsetFile(dir, i) + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            }
            if (root)
            {
                for (int i = 0; i < MEMBERS; i++)
                {
                    final Path data = cluster.dataDir(i);
                    Files.createDirectories(data);
                    exec("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", data.toString());
                    mounts.add(data);
                }
                CLEANED.set(false);
                exec("iptables", "-w", "-N", CHAIN);
                exec("iptables", "-w", "-I", "INPUT", "-i", "lo", "-j", CHAIN);
                // Also on Ctrl-C or SIGTERM: the host's packet filter and mounts are put back as they were.
                Runtime.getRuntime().addShutdownHook(new Thread(() -> cleanUp(mounts), "nemesis-cleanup"));
            }
            for (int i = 0; i < MEMBERS; i++)
            {
                cluster.start(i);
            }
            System.out.printf(Locale.ROOT, "nemesis: %.1f minutes, seed %d, members in %s%s%n", minutes, seed, dir,
                root ? "" : " (not root: no partitions, no full disks)");
            return new Nemesis(seed, cluster, root, dir).runFor(minutes, seed);
        }
        finally
        {
            if (root)
            {
                cleanUp(mounts);
            }
        }
    }

    /** Each step on its own, each failure said: one that fails does not keep the others from running. */
    private static synchronized void cleanUp(final List<Path> mounts)
    {
        if (!CLEANED.compareAndSet(false, true))
        {
            return;
        }
        quietly("iptables", "-w", "-D", "INPUT", "-i", "lo", "-j", CHAIN);
        quietly("iptables", "-w", "-F", CHAIN);
        quietly("iptables", "-w", "-X", CHAIN);
        for (final Path mount : mounts)
        {
            quietly("umount", "-l", mount.toString());
        }
        mounts.clear();
    }

    private int runFor(final double minutes, final long seed) throws Exception
    {
        final List<Member> members = cluster.members();
        final List<HistoryOperation> history = Collections.synchronizedList(new ArrayList<>());
        final List<Long> okAt = Collections.synchronizedList(new ArrayList<>());
        final long[] duplicates = new long[CLIENTS];
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++)
        {
            final int clientId = c;
            final Thread t = new Thread(() -> drive(clientId, seed, members, history, okAt, duplicates, stop),
                "nemesis-client-" + c);
            t.start();
            clients.add(t);
        }
        final long end = System.nanoTime() + (long)(minutes * 60e9);
        final List<Fault> kinds = root ? List.of(Fault.values()) :
            List.of(Fault.KILL, Fault.PAUSE, Fault.SLOW_DISK, Fault.CLOCK_STEP);
        Thread.sleep(3000);
        while (System.nanoTime() < end)
        {
            inject(kinds.get(random.nextInt(kinds.size())));
            Thread.sleep(1000 + random.nextInt(1000));
        }
        Thread.sleep(3000);
        stop.set(true);
        for (final Thread t : clients)
        {
            t.join();
        }
        return report(history, okAt, duplicates);
    }

    private void inject(final Fault fault) throws Exception
    {
        final int victim = random.nextInt(MEMBERS);
        final long holdMs = 1000 + random.nextInt(2000);
        final long startNs = System.nanoTime();
        switch (fault)
        {
            case KILL ->
            {
                cluster.kill(victim);
                Thread.sleep(holdMs);
                cluster.start(victim);
            }
            case PAUSE ->
            {
                final String pid = Long.toString(cluster.pid(victim));
                exec("kill", "-STOP", pid);
                Thread.sleep(holdMs);
                exec("kill", "-CONT", pid);
            }
            case PARTITION ->
            {
                // The highest id: every link it has is one it was dialled on, so all of them are cut (see above).
                final String port = Integer.toString(cluster.members().get(MEMBERS - 1).port());
                exec("iptables", "-w", "-A", CHAIN, "-p", "tcp", "--dport", port, "-j", "DROP");
                exec("iptables", "-w", "-A", CHAIN, "-p", "tcp", "--sport", port, "-j", "DROP");
                Thread.sleep(holdMs);
                exec("iptables", "-w", "-F", CHAIN);
            }
            case DISK_FULL ->
            {
                final Path filler = cluster.dataDir(victim).resolve("nemesis.filler");
                fill(filler);
                Thread.sleep(holdMs);
                Files.delete(filler);
            }
            case SLOW_DISK ->
            {
                final Path slow = slowSyncFile(dir, victim);
                Files.writeString(slow, Long.toString(500 + random.nextInt(1500)));
                Thread.sleep(holdMs);
                Files.delete(slow);
            }
            case CLOCK_STEP ->
            {
                final Path offset = clockOffsetFile(dir, victim);
                final long stepMs = (random.nextBoolean() ? 1 : -1) * (1000 + random.nextInt(599_000));
                Files.writeString(offset, Long.toString(stepMs));
                Thread.sleep(holdMs);
                Files.delete(offset);
            }
            default -> throw new IllegalStateException(fault.name());
        }
        injected.merge(fault, 1, Integer::sum);
        windows.add(new long[]{ startNs, System.nanoTime() });
        windowKinds.add(fault);
    }

    private static void drive(
        final int clientId,
        final long seed,
        final List<Member> members,
        final List<HistoryOperation> history,
        final List<Long> okAt,
        final long[] duplicates,
        final AtomicBoolean stop)
    {
        try (KeyValueClient client = new KeyValueClient(clientId, members))
        {
            if (!client.awaitConnected(30_000))
            {
                throw new IllegalStateException("client " + clientId + " could not open a session in 30 s");
            }
            final Random random = new Random(seed + clientId);
            int n = 0;
            while (!stop.get())
            {
                final String key = "k" + random.nextInt(KEYS);
                final String value = "c" + clientId + "-" + n++;
                final HistoryOperation op = switch (random.nextInt(3))
                {
                    case 0 -> client.get(key, 5_000);
                    case 1 -> client.put(key, value, 5_000);
                    default -> client.cas(key, "c" + random.nextInt(CLIENTS) + "-" + random.nextInt(n), value,
                        5_000);
                };
                history.add(op);
                if ("ok".equals(op.status()))
                {
                    okAt.add(System.nanoTime());
                }
                // About 100 operations a second a client: a ten-minute history stays small enough to keep and check
                // (unpaced, a minute made half a million), and a silence still shows to the 10 ms.
                Thread.sleep(10);
            }
            duplicates[clientId] = client.duplicatesSeen();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private int report(final List<HistoryOperation> history, final List<Long> okAt, final long[] duplicates)
    {
        final long[] ok = okAt.stream().mapToLong(Long::longValue).sorted().toArray();
        final Map<Fault, Long> silenceMs = new EnumMap<>(Fault.class);
        for (int w = 0; w < windows.size(); w++)
        {
            // The longest gap between successful operations that overlaps the fault or the 2 s after it heals.
            final long from = windows.get(w)[0];
            final long to = windows.get(w)[1] + TimeUnit.SECONDS.toNanos(2);
            long longest = 0;
            for (int k = 1; k < ok.length; k++)
            {
                if (ok[k] >= from && ok[k - 1] <= to)
                {
                    longest = Math.max(longest, ok[k] - ok[k - 1]);
                }
            }
            silenceMs.merge(windowKinds.get(w), TimeUnit.NANOSECONDS.toMillis(longest), Math::max);
        }
        long okCount = 0;
        long info = 0;
        for (final HistoryOperation op : history)
        {
            okCount += "ok".equals(op.status()) ? 1 : 0;
            info += "info".equals(op.status()) ? 1 : 0;
        }
        long applied = 0;
        for (final long d : duplicates)
        {
            applied = Math.max(applied, d);
        }
        final LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
        final StringBuilder faults = new StringBuilder();
        final StringBuilder silences = new StringBuilder();
        for (final Fault f : Fault.values())
        {
            faults.append(' ').append(f.label).append('=').append(injected.getOrDefault(f, 0));
            silences.append(' ').append(f.label).append('=').append(silenceMs.containsKey(f) ?
                silenceMs.get(f) : "-");
        }
        System.out.printf(Locale.ROOT, "nemesis faults:%s%nnemesis operations=%d ok=%d fail=%d info=%d " +
            "duplicates_applied=%d linearizable=%s%nnemesis longest_silence_ms:%s%n", faults, history.size(), okCount,
            history.size() - okCount - info, info, applied, result.linearizable(), silences);
        if (!result.linearizable())
        {
            System.out.println("not linearizable at key " + result.badKey() + ": " + result.detail());
        }
        return result.linearizable() && 0 == applied ? 0 : 1;
    }

    private static void fill(final Path filler) throws IOException
    {
        final byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(filler))
        {
            while (true)
            {
                out.write(chunk);
            }
        }
        catch (final IOException ex)
        {
            if (null == ex.getMessage() || !ex.getMessage().contains("No space left on device"))
            {
                throw ex;
            }
        }
    }

    private static boolean isRoot()
    {
        try
        {
            return "0".equals(exec("id", "-u").trim());
        }
        catch (final IOException | InterruptedException ex)
        {
            return false;
        }
    }

    private static String exec(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || 0 != p.exitValue())
        {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    private static void quietly(final String... command)
    {
        try
        {
            exec(command);
        }
        catch (final IOException | InterruptedException ex)
        {
            System.err.println("nemesis: cleanup: " + ex.getMessage());
        }
    }
}
