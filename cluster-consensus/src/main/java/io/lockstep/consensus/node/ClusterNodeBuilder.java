package io.lockstep.consensus.node;

import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.consensus.TimeoutProfile;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * A member started from code, in the caller's process:
 * <pre>{@code
 * try (ClusterNode member = ClusterNode.builder()
 *         .memberId(0)
 *         .member(0, "10.0.1.1", 9101).member(1, "10.0.2.1", 9101).member(2, "10.0.3.1", 9101)
 *         .dataDir(Path.of("/var/lib/lockstep"))
 *         .service(MatchingEngine::new)
 *         .secret(ClusterSecret.read(Path.of("/etc/lockstep/cluster.secret")))
 *         .start())
 * {
 *     member.awaitTermination();
 * }
 * }</pre>
 * Each setter stands for a key of the configuration file ({@code lockstep.*}, named in its Javadoc), and
 * {@link #set(String, String)} reaches every other key: {@link #config()} reads them through the same checks and
 * defaults as a file, so a member built here and one started from a file with the same values are configured alike,
 * and a wrong value gets the same message. Objects that have no text form (the service, a secret held in memory, an
 * authenticator instance) are handed over directly; giving one and also setting its key is refused.
 * <p>
 * Starting a member changes nothing JVM-wide (no security properties, no logging configuration beyond a rehearsal's
 * quiet spell, below), except that a
 * member serving metrics sets the JDK HTTP server's request and response timeouts, which it reads only from system
 * properties ({@code sun.net.httpserver.maxReqTime} and {@code maxRspTime}). Give the
 * JVM the {@code --add-exports} and {@code --add-opens} options Agrona needs, and {@code -XX:PerMethodTrapLimit=0}:
 * without it the first member started in the JVM rehearses in-process for 5-15 s first (see the docs on
 * embedding a member), and quiets the {@code io.lockstep} logger while it does.
 */
public final class ClusterNodeBuilder
{
    private static final String SOURCE = "ClusterNode.builder()";

    private final Properties properties = new Properties();
    private final StringBuilder members = new StringBuilder();
    private Supplier<? extends ClusteredService> service;
    private ClusterSecret secret;
    private ClusterSecret toolSecret;
    private ClientAuthenticator authenticator;

    ClusterNodeBuilder()
    {
    }

    /**
     * @param id this member's id, one of the members' ({@code lockstep.member.id}).
     * @return this builder.
     */
    public ClusterNodeBuilder memberId(final int id)
    {
        return set(NodeConfig.MEMBER_ID, Integer.toString(id));
    }

    /**
     * Add a voting member: this one and each of its peers, the same list on every member ({@code lockstep.members}).
     *
     * @param id   its id.
     * @param host the host or address its peers and clients dial.
     * @param port its port.
     * @return this builder.
     */
    public ClusterNodeBuilder member(final int id, final String host, final int port)
    {
        return addMember(id, host, port, "");
    }

    /**
     * Add a warm standby: a non-voting member, usually in another zone ({@code /nonvoting} in {@code
     * lockstep.members}).
     *
     * @param id   its id.
     * @param host the host or address its peers dial.
     * @param port its port.
     * @return this builder.
     */
    public ClusterNodeBuilder standby(final int id, final String host, final int port)
    {
        return addMember(id, host, port, "/nonvoting");
    }

    private ClusterNodeBuilder addMember(final int id, final String host, final int port, final String suffix)
    {
        Objects.requireNonNull(host, "host");
        if (host.isBlank() || host.chars().anyMatch(c -> ',' == c || '=' == c || '/' == c || Character.isWhitespace(c)))
        {
            throw new IllegalArgumentException("host '" + host + "' of member " + id + " is not a host name or " +
                "address");
        }
        if (properties.containsKey(NodeConfig.MEMBERS) && members.isEmpty())
        {
            throw new IllegalStateException(NodeConfig.MEMBERS + " was set as text: add members one way, not both");
        }
        members.append(members.isEmpty() ? "" : ",").append(id).append('=').append(host).append(':').append(port)
            .append(suffix);
        properties.setProperty(NodeConfig.MEMBERS, members.toString());
        return this;
    }

    /**
     * @param directory where the log, the election state and snapshots live ({@code lockstep.data.dir}): one per
     *                  member, on a local disk.
     * @return this builder.
     */
    public ClusterNodeBuilder dataDir(final Path directory)
    {
        return set(NodeConfig.DATA_DIR, directory.toString());
    }

    /**
     * @param factory makes the service this member runs: once at start, and again each time a snapshot is installed,
     *                so it must return a new instance on every call ({@code MatchingEngine::new}). Without one the
     *                member runs consensus only. In place of {@code lockstep.service}.
     * @return this builder.
     */
    public ClusterNodeBuilder service(final Supplier<? extends ClusteredService> factory)
    {
        this.service = Objects.requireNonNull(factory, "factory");
        return this;
    }

    /**
     * @param policy {@link DurabilityPolicy#BATCH} (the default: each batch is on disk before it is acknowledged) or
     *               {@link DurabilityPolicy#NONE} ({@code lockstep.durability}).
     * @return this builder.
     */
    public ClusterNodeBuilder durability(final DurabilityPolicy policy)
    {
        return set(NodeConfig.DURABILITY, policy.name().toLowerCase(Locale.ROOT));
    }

    /**
     * @param profile election and heartbeat timeouts for a LAN (the default) or a WAN ({@code lockstep.timeouts}).
     * @return this builder.
     */
    public ClusterNodeBuilder timeouts(final TimeoutProfile profile)
    {
        return set(NodeConfig.TIMEOUTS, profile.name().toLowerCase(Locale.ROOT));
    }

    /**
     * @param memberSecret what members prove to each other; without it any process that reaches a member may claim
     *                     to be one. In place of {@code lockstep.cluster.secret.file}.
     * @return this builder.
     */
    public ClusterNodeBuilder secret(final ClusterSecret memberSecret)
    {
        this.secret = Objects.requireNonNull(memberSecret, "memberSecret");
        return this;
    }

    /**
     * @param secretOfTools what tool hosts prove; it must differ from the member secret. In place of
     *                      {@code lockstep.tool.secret.file}.
     * @return this builder.
     */
    public ClusterNodeBuilder toolSecret(final ClusterSecret secretOfTools)
    {
        this.toolSecret = Objects.requireNonNull(secretOfTools, "secretOfTools");
        return this;
    }

    /**
     * @param clientAuthenticator decides which clients may open sessions, and as whom. In place of
     *                            {@code lockstep.client.authenticator}; the default accepts every client.
     * @return this builder.
     */
    public ClusterNodeBuilder authenticator(final ClientAuthenticator clientAuthenticator)
    {
        this.authenticator = Objects.requireNonNull(clientAuthenticator, "clientAuthenticator");
        return this;
    }

    /**
     * @param port serve {@code /metrics}, {@code /health} and {@code /ready} over HTTP on this port; 0 for off, the
     *             default ({@code lockstep.metrics.port}).
     * @return this builder.
     */
    public ClusterNodeBuilder metricsPort(final int port)
    {
        return set(NodeConfig.METRICS_PORT, Integer.toString(port));
    }

    /**
     * @param timeout a client session silent this long is closed ({@code lockstep.session.timeout.ms}).
     * @return this builder.
     */
    public ClusterNodeBuilder sessionTimeout(final Duration timeout)
    {
        return set(NodeConfig.SESSION_TIMEOUT_MS, Long.toString(timeout.toMillis()));
    }

    /**
     * @param bytes the leader asks for a snapshot every this many bytes of log; 0 for only when a tool asks
     *              ({@code lockstep.snapshot.interval.bytes}).
     * @return this builder.
     */
    public ClusterNodeBuilder snapshotIntervalBytes(final long bytes)
    {
        return set(NodeConfig.SNAPSHOT_INTERVAL_BYTES, Long.toString(bytes));
    }

    /**
     * @param idle how the member's thread waits with nothing to do: {@code selector} (the default), {@code yield} or
     *             {@code spin} ({@code lockstep.idle}).
     * @return this builder.
     */
    public ClusterNodeBuilder idle(final String idle)
    {
        return set(IdleSettings.IDLE, idle);
    }

    /**
     * @param dedicated true: the service on a thread of its own, for machines with cores to spare; false (the
     *                  default): consensus and service share one thread ({@code lockstep.threading}).
     * @return this builder.
     */
    public ClusterNodeBuilder dedicatedServiceThread(final boolean dedicated)
    {
        return set(ThreadingSettings.THREADING, dedicated ? "dedicated" : "shared");
    }

    /**
     * Any key of the configuration file, as its text: the rest of the settings (TLS, client limits, standby
     * replication, listen address). Paths (secret, token and TLS files) are relative to the working directory.
     *
     * @param key   a {@code lockstep.*} key.
     * @param value its value, as the file would hold it.
     * @return this builder.
     * @throws IllegalArgumentException if no member reads that key (a misspelt key would otherwise be ignored).
     */
    public ClusterNodeBuilder set(final String key, final String value)
    {
        if (!ConfigKeys.ALL.contains(key))
        {
            throw new IllegalArgumentException("'" + key + "' is not a key a member reads: see " +
                "docs/reference/configuration.md");
        }
        if (NodeConfig.MEMBERS.equals(key) && !members.isEmpty())
        {
            throw new IllegalStateException("members were added with member(...): add members one way, not both");
        }
        properties.setProperty(key, Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * @return the configuration, checked as a file's would be. Start it with {@link #start()}, or with
     * {@link ClusterNode#start(NodeConfig, Supplier)} and the same service factory.
     * @throws NodeConfig.ConfigException naming what is missing or wrong.
     */
    public NodeConfig config() throws NodeConfig.ConfigException
    {
        return NodeConfig.parse(SOURCE, properties, new SecuritySettings.Given(secret, toolSecret, authenticator),
            null != service);
    }

    /**
     * Start the member: open (and recover) its log, listen, and run it on a thread of its own (two with
     * {@link #dedicatedServiceThread}). Stop it with {@link ClusterNode#close()}.
     *
     * @return the running member.
     * @throws NodeConfig.ConfigException naming what is missing or wrong in the configuration.
     * @throws IllegalStateException      if the member cannot start with it (its data directory, its port).
     */
    public ClusterNode start() throws NodeConfig.ConfigException
    {
        final NodeConfig config = config();
        return null == service ? ClusterNode.start(config) : ClusterNode.start(config, service);
    }
}
