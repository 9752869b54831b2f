package io.lockstep.testkit;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.JvmOptions;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.node.MemorySettings;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.node.SecuritySettings;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.FreePorts;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.IoUtil;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A Lockstep cluster of member containers running <em>your</em> {@link ClusteredService} from your test's class
 * path, with the faults a failover test needs: SIGKILL, graceful stop, pause (a hung process: its sockets stay
 * open and silent), partition and heal, restart on the same data, wiping a member's data. Each member runs in the
 * image {@code bin/build-node-image} makes (a jlink runtime, no registry needed); your class path is mounted
 * read-only, so nothing is copied and the image is reused until the JDK changes.
 * <pre>{@code
 * try (ContainerCluster cluster = ContainerCluster.of(3, MyMatchingEngine.class, workDir))
 * {
 *     cluster.start();
 *     int leader = cluster.awaitLeader(Duration.ofSeconds(20));
 *     try (ClusterClient client = cluster.client((session, sequence, buffer, offset, length) -> received++))
 *     {
 *         client.awaitConnected(10_000);
 *         ... offer orders, poll ...
 *         cluster.kill(leader);                       // SIGKILL
 *         ... keep offering: the client resumes on the new leader and resends what was not acknowledged ...
 *     }
 *     cluster.restart(leader);                        // same data: it catches up
 *     cluster.assertReplicasAgree(Duration.ofSeconds(20));
 * }
 * }</pre>
 * Members talk to each other on a network of their own (so that {@link #isolate} cuts a member off from its peers)
 * and to this JVM through fixed published ports on loopback (so a restarted member is found where it was).
 * Requires a running Docker engine and the environment Testcontainers needs without a registry (set them in
 * Failsafe's {@code <environmentVariables>}): {@code TESTCONTAINERS_RYUK_DISABLED=true},
 * {@code TESTCONTAINERS_HOST_OVERRIDE=localhost}, {@code TESTCONTAINERS_CHECKS_DISABLE=true},
 * {@code DOCKER_HOST=unix:///var/run/docker.sock}; call {@link DockerRequirement#check()} from a {@code @BeforeAll}.
 * Containers carry the label {@code lockstep.testkit=<run id>} and are removed by {@link #close}.
 */
public final class ContainerCluster implements TestCluster
{
    /** The port every member listens on inside its container. */
    private static final int PORT = 9000;
    private static final String READY_LINE = " ready: listening on ";

    private final int count;
    private final String serviceClass;
    private final Path root;
    private final String image;
    private final String runId = Long.toHexString(new SecureRandom().nextLong());
    private final int[] hostPorts;
    private final ClusterSecret toolSecret;
    private final Map<String, String> settings = new LinkedHashMap<>();
    private final Network network;
    private final List<GenericContainer<?>> containers = new ArrayList<>();
    private final DockerClient docker;

    private ContainerCluster(final int count, final String serviceClass, final Path root) throws IOException
    {
        this.count = count;
        this.serviceClass = serviceClass;
        this.root = root.toAbsolutePath();
        this.image = NodeImage.name();
        this.hostPorts = new int[count];
        for (int i = 0; i < count; i++)
        {
            hostPorts[i] = FreePorts.next();
        }
        Files.createDirectories(this.root);
        ClusterSecret.writeNew(this.root.resolve("cluster.secret"));
        this.toolSecret = ClusterSecret.writeNew(this.root.resolve("tool.secret"));
        this.docker = DockerClientFactory.instance().client();
        this.network = Network.builder().createNetworkCmdModifier(cmd -> cmd.withInternal(true)).build();
        settings.put(NodeConfig.DURABILITY, "none");
        settings.put(NodeConfig.TIMEOUTS, "lan");
    }

    /**
     * @param members number of members (3 for the usual cluster).
     * @param service your service class (a public no-argument constructor), on this JVM's class path.
     * @param workDir where configs and each member's data directory go (bind-mounted into the containers).
     * @return the cluster, not started.
     */
    public static ContainerCluster of(final int members, final Class<? extends ClusteredService> service,
        final Path workDir) throws IOException
    {
        return new ContainerCluster(members, service.getName(), workDir);
    }

    /**
     * Set a member configuration key on every member (before {@link #start}); see {@code NodeConfig}.
     *
     * @return this.
     */
    public ContainerCluster configure(final String key, final String value)
    {
        settings.put(key, value);
        return this;
    }

    /**
     * Create and start every member container, and wait until each says it is listening.
     */
    public void start() throws IOException
    {
        // What a deployed member holds: no test kit or simulation (the same class path as LocalCluster's members).
        final String classPath = LocalCluster.memberClassPath();
        for (int i = 0; i < count; i++)
        {
            writeConfig(i);
            final int id = i;
            final GenericContainer<?> container = new GenericContainer<>(image)
                .withImagePullPolicy(name -> false)
                .withLabel("lockstep.testkit", runId)
                .withFileSystemBind(root.resolve("conf" + i).toString(), "/app/conf", BindMode.READ_ONLY)
                .withFileSystemBind(dataDir(i).toString(), "/data", BindMode.READ_WRITE)
                .withCreateContainerCmdModifier(cmd ->
                {
                    cmd.withExposedPorts(new ExposedPort(PORT));
                    final HostConfig host = cmd.getHostConfig();
                    host.withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", hostPorts[id]),
                        new ExposedPort(PORT)));
                    // The published port lives on the default bridge; peers meet on the internal network, joined
                    // once the container runs (a member retries its peers until their names resolve).
                    host.withNetworkMode("bridge");
                })
                .withCommand(command(classPath))
                .withStartupTimeout(Duration.ofSeconds(60))
                .waitingFor(new org.testcontainers.containers.wait.strategy.LogMessageWaitStrategy()
                    .withRegEx(".*" + READY_LINE + ".*\\n"));
            for (final String entry : classPath.split(File.pathSeparator))
            {
                if (!entry.isEmpty() && new File(entry).exists())
                {
                    container.withFileSystemBind(entry, entry, BindMode.READ_ONLY);
                }
            }
            containers.add(container);
        }
        containers.parallelStream().forEach(GenericContainer::start);
        for (final GenericContainer<?> c : containers)
        {
            docker.connectToNetworkCmd().withContainerId(c.getContainerId()).withNetworkId(network.getId())
                .withContainerNetwork(new com.github.dockerjava.api.model.ContainerNetwork()
                    .withAliases(alias(containers.indexOf(c)))).exec();
        }
    }

    private static List<String> commandList(final String classPath)
    {
        // As bin/lockstep node, JIT setting included: without it every start and restart would rehearse first.
        final List<String> command = new ArrayList<>(JvmOptions.member());
        command.add("-XX:+UseSerialGC");
        command.addAll(MemorySettings.jvmOptions(MemorySettings.parse(LocalCluster.MEMBER_MEMORY)));
        command.addAll(List.of("-cp", classPath, ClusterNode.class.getName(),
            "--config", "/app/conf/node.properties"));
        return command;
    }

    private static String[] command(final String classPath)
    {
        return commandList(classPath).toArray(new String[0]);
    }

    private void writeConfig(final int i) throws IOException
    {
        final Path conf = root.resolve("conf" + i);
        Files.createDirectories(conf);
        Files.createDirectories(dataDir(i));
        Files.copy(root.resolve("cluster.secret"), conf.resolve("cluster.secret"),
            StandardCopyOption.REPLACE_EXISTING);
        Files.copy(root.resolve("tool.secret"), conf.resolve("tool.secret"),
            StandardCopyOption.REPLACE_EXISTING);
        for (final String secret : new String[]{ "cluster.secret", "tool.secret" })
        {
            // Members refuse a secret file others may read; the container's member runs as root, which reads it.
            Files.setPosixFilePermissions(conf.resolve(secret),
                PosixFilePermissions.fromString("rw-------"));
        }
        final StringBuilder members = new StringBuilder();
        for (int m = 0; m < count; m++)
        {
            members.append(m == 0 ? "" : ",").append(m).append('=').append(alias(m)).append(':').append(PORT);
        }
        final StringBuilder text = new StringBuilder()
            .append(NodeConfig.MEMBER_ID).append('=').append(i).append('\n')
            .append(NodeConfig.MEMBERS).append('=').append(members).append('\n')
            .append(NodeConfig.DATA_DIR).append("=/data\n")
            .append(NodeConfig.LISTEN_ADDRESS).append("=0.0.0.0\n")
            .append(NodeConfig.SERVICE).append('=').append(serviceClass).append('\n')
            .append(SecuritySettings.SECRET_FILE).append("=cluster.secret\n")
            .append(SecuritySettings.TOOL_SECRET_FILE).append("=tool.secret\n");
        settings.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(conf.resolve("node.properties"), text.toString());
    }

    private String alias(final int i)
    {
        return "m" + i;
    }

    /**
     * @return member i's data directory on this machine (mounted as /data in its container).
     */
    public Path dataDir(final int i)
    {
        return root.resolve("data" + i);
    }

    /**
     * @return the members as this JVM reaches them (loopback, published ports): for clients and tools.
     */
    public List<Member> members()
    {
        final List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            members.add(new Member(i, "127.0.0.1", hostPorts[i], true));
        }
        return members;
    }

    /**
     * @return a tool client holding the tool secret (close it).
     */
    public AdminClient adminClient()
    {
        return new AdminClient(members(), toolSecret);
    }

    /**
     * @return a client of this cluster with default settings, connecting (close it).
     */
    public ClusterClient client(final ClusterClient.EgressListener listener)
    {
        return ClusterClient.connect(members(), listener);
    }

    /**
     * SIGKILL member i's process. Its container and data stay: {@link #restart} brings it back.
     */
    public void kill(final int i)
    {
        docker.killContainerCmd(id(i)).withSignal("SIGKILL").exec();
        awaitNotRunning(i);
    }

    /**
     * Stop member i gracefully (SIGTERM: the member closes its log and exits).
     */
    public void stop(final int i)
    {
        docker.stopContainerCmd(id(i)).withTimeout(10).exec();
        awaitNotRunning(i);
    }

    /**
     * Start member i again on the same data, after {@link #kill}, {@link #stop} or {@link #wipe}, and wait until it
     * listens.
     */
    public void restart(final int i)
    {
        final int readyBefore = countReady(i);
        docker.startContainerCmd(id(i)).exec();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (countReady(i) <= readyBefore)
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("member " + i + " did not listen within 30 s of its restart\n" + logs(i));
            }
            sleepBriefly();
        }
    }

    /**
     * Freeze member i (cgroup freezer): its sockets stay open and silent, like a process stuck in a long GC.
     */
    public void pause(final int i)
    {
        docker.pauseContainerCmd(id(i)).exec();
    }

    public void unpause(final int i)
    {
        docker.unpauseContainerCmd(id(i)).exec();
    }

    /**
     * Cut member i off from every other member (it stays reachable from this JVM, as a leader cut off from its
     * peers still is from some clients).
     */
    public void isolate(final int i)
    {
        docker.disconnectFromNetworkCmd().withContainerId(id(i)).withNetworkId(network.getId()).withForce(true).exec();
    }

    /**
     * Undo {@link #isolate}.
     */
    public void heal(final int i)
    {
        docker.connectToNetworkCmd().withContainerId(id(i)).withNetworkId(network.getId())
            .withContainerNetwork(new com.github.dockerjava.api.model.ContainerNetwork().withAliases(alias(i))).exec();
    }

    /**
     * Kill member i and delete its data: restarted, it rejoins empty and is brought up to date by the leader (by
     * snapshot if the leader's log no longer reaches back).
     */
    public void wipe(final int i)
    {
        kill(i);
        IoUtil.delete(dataDir(i).toFile(), true);
        try
        {
            Files.createDirectories(dataDir(i));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot recreate " + dataDir(i), ex);
        }
    }

    /**
     * @return member i's output so far.
     */
    public String logs(final int i)
    {
        return containers.get(i).getLogs();
    }

    public int size()
    {
        return count;
    }

    public void close()
    {
        for (final GenericContainer<?> c : containers)
        {
            try
            {
                if (Boolean.TRUE.equals(docker.inspectContainerCmd(c.getContainerId()).exec().getState().getPaused()))
                {
                    docker.unpauseContainerCmd(c.getContainerId()).exec();
                }
            }
            catch (final RuntimeException ignore)
            {
                // Already gone: nothing to unpause.
            }
            c.stop();
        }
        network.close();
    }

    private String id(final int i)
    {
        return containers.get(i).getContainerId();
    }

    private int countReady(final int i)
    {
        final String out = logs(i);
        int n = 0;
        for (int at = out.indexOf(READY_LINE); at >= 0; at = out.indexOf(READY_LINE, at + 1))
        {
            n++;
        }
        return n;
    }

    private void awaitNotRunning(final int i)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Boolean.TRUE.equals(docker.inspectContainerCmd(id(i)).exec().getState().getRunning()))
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("member " + i + " still runs 20 s after it was stopped");
            }
            sleepBriefly();
        }
    }

    private static void sleepBriefly()
    {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
}
