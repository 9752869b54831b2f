package io.lockstep.localcluster;

import io.lockstep.cluster.JvmOptions;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.node.MemorySettings;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.node.SecuritySettings;
import io.lockstep.consensus.tool.AdminClient;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Members as real JVM processes on loopback, for the demo and the process tests: each is started from a generated
 * config file on a free port, can be killed with SIGKILL and restarted on the same data directory, and is stopped
 * by {@link #close()}. Each member's output goes to {@code nodeN.out} in the root directory.
 */
public final class LocalCluster implements AutoCloseable
{
    /** Each member JVM's {@code lockstep.memory}: heap and direct buffers in all. */
    public static final String MEMBER_MEMORY = "320m";

    private final Path root;
    private final int count;
    private final int[] ports;
    private final Process[] processes;
    private final ClusterSecret secret;
    private final ClusterSecret toolSecret;
    private final int standbys;
    private final List<DelayProxy> proxies = new ArrayList<>();
    /** Each member's port behind its proxy, once {@link #delayEveryLink(long)} put it in a zone of its own. */
    private int[] delayedPorts;

    /**
     * @param root          directory for configs, data and output.
     * @param count         number of members.
     * @param durability    "batch" or "none".
     * @param segmentLength log segment length.
     */
    public LocalCluster(final Path root, final int count, final String durability, final int segmentLength)
        throws IOException
    {
        this(root, count, durability, segmentLength, null);
    }

    /**
     * @param root          directory for configs, data and output.
     * @param count         number of members.
     * @param durability    "batch" or "none".
     * @param segmentLength log segment length.
     * @param serviceClass  ClusteredService to run on every member, or null for consensus only.
     */
    public LocalCluster(
        final Path root, final int count, final String durability, final int segmentLength, final String serviceClass)
        throws IOException
    {
        this(root, count, 0, durability, segmentLength, serviceClass);
    }

    /**
     * @param root          directory for configs, data and output.
     * @param count         number of members, standbys included.
     * @param standbys      how many of them (the highest ids) are warm standbys: non-voting, started as
     *                      {@code StandbyNode}.
     * @param durability    "batch" or "none".
     * @param segmentLength log segment length.
     * @param serviceClass  ClusteredService to run on every member, or null for consensus only.
     */
    public LocalCluster(
        final Path root, final int count, final int standbys, final String durability, final int segmentLength,
        final String serviceClass) throws IOException
    {
        this.standbys = standbys;
        this.root = root;
        this.count = count;
        this.ports = new int[count];
        this.processes = new Process[count];
        Files.createDirectories(root);
        // Members prove a member secret, and tools a tool secret, as a production cluster's should: fresh random
        // ones per cluster.
        this.secret = ClusterSecret.writeNew(secretFile());
        this.toolSecret = ClusterSecret.writeNew(toolSecretFile());
        for (int i = 0; i < count; i++)
        {
            ports[i] = FreePorts.next();
        }
        final StringBuilder members = new StringBuilder();
        for (int i = 0; i < count; i++)
        {
            members.append(i == 0 ? "" : ",").append(i).append("=127.0.0.1:").append(ports[i])
                .append(isStandby(i) ? "/nonvoting" : "");
        }
        for (int i = 0; i < count; i++)
        {
            Files.writeString(config(i), NodeConfig.MEMBER_ID + "=" + i + "\n" +
                NodeConfig.MEMBERS + "=" + members + "\n" +
                NodeConfig.DATA_DIR + "=" + dataDir(i) + "\n" +
                NodeConfig.TIMEOUTS + "=lan\n" +
                NodeConfig.DURABILITY + "=" + durability + "\n" +
                NodeConfig.SEGMENT_LENGTH + "=" + segmentLength + "\n" +
                SecuritySettings.SECRET_FILE + "=" + secretFile().getFileName() + "\n" +
                SecuritySettings.TOOL_SECRET_FILE + "=" + toolSecretFile().getFileName() + "\n" +
                (null == serviceClass ? "" : NodeConfig.SERVICE + "=" + serviceClass + "\n"));
        }
    }

    /**
     * Set a configuration key on every member (before starting them).
     */
    public void configureAll(final String key, final String value) throws IOException
    {
        for (int i = 0; i < count; i++)
        {
            Files.writeString(config(i), key + "=" + value + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        }
    }

    /**
     * Serve metrics on every member, each on a free port of its own (before starting them).
     *
     * @return the ports, by member id.
     */
    public int[] enableMetrics() throws IOException
    {
        final int[] metricsPorts = new int[count];
        for (int i = 0; i < count; i++)
        {
            metricsPorts[i] = FreePorts.next();
            Files.writeString(config(i), NodeConfig.METRICS_PORT + "=" + metricsPorts[i] + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.APPEND);
        }
        return metricsPorts;
    }

    public List<Member> members()
    {
        final List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            members.add(new Member(i, "127.0.0.1", ports[i], !isStandby(i)));
        }
        return members;
    }

    /**
     * @return the file holding the cluster's secret (next to the configs, which name it).
     */
    public Path secretFile()
    {
        return root.resolve("cluster.secret");
    }

    /**
     * @return the file holding the secret tools prove (next to the configs, which name it).
     */
    public Path toolSecretFile()
    {
        return root.resolve("tool.secret");
    }

    /**
     * @return the member secret the members require of each other.
     */
    public ClusterSecret secret()
    {
        return secret;
    }

    /**
     * @return the tool secret the members require of tools.
     */
    public ClusterSecret toolSecret()
    {
        return toolSecret;
    }

    /**
     * @return a tool client holding the tool secret (close it).
     */
    public AdminClient adminClient()
    {
        return new AdminClient(members(), toolSecret);
    }

    /**
     * Put every standby behind a {@link DelayProxy} (before starting the members): the voting members reach it
     * through the proxy, a cross-zone link of {@code delayMs} each way; it listens where it always did.
     */
    public void delayStandbys(final long delayMs) throws IOException
    {
        final StringBuilder members = new StringBuilder();
        for (int i = 0; i < count; i++)
        {
            int port = ports[i];
            if (isStandby(i))
            {
                final DelayProxy proxy = proxyOnAFreePort(ports[i], delayMs);
                proxies.add(proxy);
                port = proxy.port();
            }
            members.append(i == 0 ? "" : ",").append(i).append("=127.0.0.1:").append(port)
                .append(isStandby(i) ? "/nonvoting" : "");
        }
        for (int i = 0; i < count; i++)
        {
            if (!isStandby(i))
            {
                // A later key wins when the file is loaded.
                Files.writeString(config(i), NodeConfig.MEMBERS + "=" + members + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
            }
        }
    }

    /**
     * Put every member in a zone of its own (before starting them): each reaches every other one through a
     * {@link DelayProxy} that adds {@code delayMs} each way, so a commit costs one cross-zone round trip. A client
     * given {@link #members()} reaches every member directly, as a client in the leader's zone does, wherever the
     * leader is; one given {@link #delayedMembers()} is in a zone of its own.
     */
    public void delayEveryLink(final long delayMs) throws IOException
    {
        delayedPorts = new int[count];
        for (int i = 0; i < count; i++)
        {
            final DelayProxy proxy = proxyOnAFreePort(ports[i], delayMs);
            proxies.add(proxy);
            delayedPorts[i] = proxy.port();
        }
        for (int j = 0; j < count; j++)
        {
            final StringBuilder members = new StringBuilder();
            for (int i = 0; i < count; i++)
            {
                members.append(i == 0 ? "" : ",").append(i).append("=127.0.0.1:")
                    .append(i == j ? ports[i] : delayedPorts[i]).append(isStandby(i) ? "/nonvoting" : "");
            }
            // A later key wins when the file is loaded.
            Files.writeString(config(j), NodeConfig.MEMBERS + "=" + members + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.APPEND);
        }
    }

    /**
     * @return the members as a client in a zone of its own reaches them, through the proxies of
     * {@link #delayEveryLink(long)}.
     */
    public List<Member> delayedMembers()
    {
        if (null == delayedPorts)
        {
            throw new IllegalStateException("no link is delayed: call delayEveryLink first");
        }
        final List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            members.add(new Member(i, "127.0.0.1", delayedPorts[i], !isStandby(i)));
        }
        return members;
    }

    /**
     * The member ports were found free and released before the members bind them. They lie below the ephemeral range
     * a proxy's own port comes from, except where {@link FreePorts} found no room there; for that case a proxy that
     * took one is replaced.
     */
    private DelayProxy proxyOnAFreePort(final int targetPort, final long delayMs) throws IOException
    {
        while (true)
        {
            final DelayProxy proxy = new DelayProxy(targetPort, delayMs);
            if (Arrays.stream(ports).noneMatch(p -> p == proxy.port()))
            {
                return proxy;
            }
            proxy.close();
        }
    }

    /**
     * @return true if member i is a warm standby (non-voting).
     */
    public boolean isStandby(final int i)
    {
        return i >= count - standbys;
    }

    public Path config(final int i)
    {
        return root.resolve("node" + i + ".properties");
    }

    public Path dataDir(final int i)
    {
        return root.resolve("node" + i);
    }

    public Path logDir(final int i)
    {
        return dataDir(i).resolve("log");
    }

    /**
     * This JVM's class path less the entries that hold the harness: this module, the test kit and the simulation
     * (found by where their classes were loaded from, a jar or a directory of classes, so nothing else is dropped).
     * A member started from a test or a demo runs on what a deployed member has, and its class path never holds the
     * simulation.
     *
     * @return the class path for a member process.
     */
    public static String memberClassPath()
    {
        final List<String> harness = new ArrayList<>();
        for (final String name : HARNESS_CLASSES)
        {
            final String location = codeSource(name);
            if (null != location)
            {
                harness.add(location);
            }
        }
        final StringBuilder cp = new StringBuilder();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            if (!entry.isEmpty() && !harness.contains(Path.of(entry).toAbsolutePath().normalize().toString()))
            {
                cp.append(cp.length() == 0 ? "" : File.pathSeparator).append(entry);
            }
        }
        return cp.toString();
    }

    /** One class of each harness module; those not on the class path are skipped. */
    private static final List<String> HARNESS_CLASSES = List.of(
        "io.lockstep.localcluster.LocalCluster", "io.lockstep.testkit.TestCluster",
        "io.lockstep.simulation.SimServiceCluster");

    private static String codeSource(final String className)
    {
        try
        {
            final Class<?> type = Class.forName(className, false, LocalCluster.class.getClassLoader());
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toAbsolutePath().normalize().toString();
        }
        catch (final ClassNotFoundException | URISyntaxException | RuntimeException ex)
        {
            return null;
        }
    }

    /**
     * Start a member and wait (up to 30 s) for its ready line.
     */
    public void start(final int i) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        // Memory as bin/lockstep node gives it from lockstep.memory: small, so that three members and a client fit.
        command.addAll(MemorySettings.jvmOptions(MemorySettings.parse(MEMBER_MEMORY)));
        // As bin/lockstep node, the member's JIT setting included.
        command.addAll(JvmOptions.member());
        // A local cluster serves tests and the nemesis: its members may read the fault-injection keys.
        command.add("-D" + NodeConfig.TEST_HOOKS_PROPERTY + "=true");
        // Extra options for member JVMs (profiling, GC settings): -Dlockstep.member.jvmArgs="..." with {id} for the id.
        final String extra = System.getProperty("lockstep.member.jvmArgs", "").trim();
        if (!extra.isEmpty())
        {
            for (final String arg : extra.split("\\s+"))
            {
                command.add(arg.replace("{id}", Integer.toString(i)));
            }
        }
        command.addAll(List.of("-cp", memberClassPath(),
            isStandby(i) ? "io.lockstep.standby.StandbyNode" : ClusterNode.class.getName(), "--config",
            config(i).toString()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes[i] = process;
        final CountDownLatch ready = new CountDownLatch(1);
        final Path output = root.resolve("node" + i + ".out");
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = reader.readLine()))
                {
                    Files.writeString(output, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
                    if (line.startsWith("lockstep node " + i + " ready"))
                    {
                        ready.countDown();
                    }
                }
            }
            catch (final IOException ignore)
            {
                // The process ended.
            }
        }, "member-" + i + "-output");
        pump.setDaemon(true);
        pump.start();
        if (!ready.await(30, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("member " + i + " not ready in 30 s; output:\n" + output(i));
        }
    }

    /**
     * Wait for a member's process to exit by itself (an orderly shutdown).
     *
     * @return its exit code, or -1 if it did not exit within the timeout (it is left running).
     */
    public int awaitExit(final int i, final long timeoutMs) throws InterruptedException
    {
        final Process process = processes[i];
        if (null == process || !process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            return -1;
        }
        return process.exitValue();
    }

    /**
     * @return the member's process id, or -1 if it is not running.
     */
    public long pid(final int i)
    {
        return null != processes[i] && processes[i].isAlive() ? processes[i].pid() : -1;
    }

    /**
     * SIGKILL: no shutdown hook, no flush.
     */
    public void kill(final int i) throws InterruptedException
    {
        final Process process = processes[i];
        if (null != process)
        {
            process.destroyForcibly();
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("member " + i + " did not die");
            }
            processes[i] = null;
        }
    }

    /** @return bytes carried across the standbys' delayed links, both ways, since they were set up. */
    public long zoneLinkBytes()
    {
        return proxies.stream().mapToLong(DelayProxy::bytesCarried).sum();
    }

    /**
     * Cut every standby's delayed link at once, dropping what is in flight on it (the proxies close).
     */
    public void cutStandbyLinks()
    {
        proxies.forEach(DelayProxy::close);
    }

    /**
     * SIGKILL several members at the same instant (a zone's power going), then wait for each to die.
     */
    public void killTogether(final int... ids) throws InterruptedException
    {
        for (final int i : ids)
        {
            if (null != processes[i])
            {
                processes[i].destroyForcibly();
            }
        }
        for (final int i : ids)
        {
            kill(i);
        }
    }

    /**
     * SIGTERM: the member's shutdown hook closes it in order; waits up to 10 s.
     */
    public void stop(final int i)
    {
        final Process process = processes[i];
        if (null != process)
        {
            process.destroy();
            try
            {
                if (!process.waitFor(10, TimeUnit.SECONDS))
                {
                    throw new IllegalStateException("member " + i + " did not stop within 10 s of SIGTERM");
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted stopping member " + i, ex);
            }
            processes[i] = null;
        }
    }

    public String output(final int i)
    {
        try
        {
            final Path file = root.resolve("node" + i + ".out");
            return Files.exists(file) ? Files.readString(file) : "(no output)";
        }
        catch (final IOException ex)
        {
            return "(unreadable: " + ex + ")";
        }
    }

    /**
     * Stop every member still running: SIGTERM (a clean shutdown, which flushes the log and writes any profiling
     * recording), then SIGKILL for any still alive after 5 s.
     */
    public void close()
    {
        proxies.forEach(DelayProxy::close);
        try
        {
            for (final Process process : processes)
            {
                if (null != process)
                {
                    process.destroy();
                }
            }
            for (int i = 0; i < count; i++)
            {
                if (null != processes[i] && !processes[i].waitFor(5, TimeUnit.SECONDS))
                {
                    processes[i].destroyForcibly();
                }
                processes[i] = null;
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            for (final Process process : processes)
            {
                if (null != process)
                {
                    process.destroyForcibly();
                }
            }
        }
    }
}
