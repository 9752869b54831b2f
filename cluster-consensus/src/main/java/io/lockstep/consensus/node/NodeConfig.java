package io.lockstep.consensus.node;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.TimeoutProfile;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * A member's configuration: a properties file, each key overridable by a JVM system property of the same name
 * ({@code -Dlockstep.durability=none}).
 * <pre>
 * lockstep.member.id          this member's id (required)
 * lockstep.members            every member as id=host:port, comma separated; append /nonvoting for a standby
 *                             (required), e.g. 0=127.0.0.1:9101,1=127.0.0.1:9102,2=127.0.0.1:9103
 * lockstep.data.dir           where the log and election state live; relative to the working directory (required)
 * lockstep.timeouts           lan (default) or wan: see TimeoutProfile
 * lockstep.durability         batch (default: fsync each batch before acknowledging it) or none (page cache)
 * lockstep.log.segment.length log segment length in bytes, a power of two, the same on every member (default 64 MiB)
 * lockstep.log.max.batch      bound on one log write in bytes (default 1 MiB)
 * lockstep.service            class name of the ClusteredService to run (no-argument constructor); without it the
 *                             member runs consensus only, for tools and drivers
 * lockstep.session.timeout.ms a client session silent this long is closed by the leader (default 10000)
 * lockstep.snapshot.interval.bytes  the leader asks for a snapshot every this many bytes of log (default 128 MiB;
 *                             0: only when a tool asks)
 * lockstep.snapshot.keep      snapshots kept (default 2); the log below the oldest kept is purged
 * lockstep.log.purge.delay.ms the member with id i deletes the log files a snapshot made unneeded (i + 1) times this
 *                             long after the snapshot (default 1000; 0: at once): so that the members' deletes,
 *                             tens of milliseconds of CPU each, neither land together nor in the snapshot's own moment
 * lockstep.metrics.port       serve /metrics (Prometheus text), /health and /ready over HTTP on this port (default
 *                             0: off); lockstep.metrics.address and .timeout.ms: see MetricsSettings
 * lockstep.standby.sync       true: commit (and so acknowledge) only what a standby also holds durably: RPO 0
 *                             across the loss of the primary zone, for one cross-zone round trip per commit; the
 *                             same on every voting member (default false)
 * lockstep.standby.relay      a standby's id: the leader sends the log across the zone link to it only, and it
 *                             forwards it to the other standbys (one copy per zone link); the same on every member
 *                             (default: none, each standby its own stream)
 * lockstep.idle               how the member's thread waits with nothing to do: selector (default), yield or spin;
 *                             lockstep.idle.spins and lockstep.idle.yields tune selector (see IdleSettings)
 * lockstep.threading          shared (default: one thread per member) or dedicated (the service on a thread of its
 *                             own, for machines with cores to spare); lockstep.service.idle: how that thread waits,
 *                             park (default), yield or spin (see ThreadingSettings)
 * lockstep.listen.address     the address this member listens on, when it is not the one peers dial (in a
 *                             container: 0.0.0.0, while peers dial its name); default: its address in members
 * lockstep.cluster.secret.file, lockstep.client.authenticator, lockstep.client.tokens.file: see SecuritySettings
 * </pre>
 * Disk: the log stays under about {@code keep * interval + 2 * segment length} beyond what a lagging follower that
 * is still connected holds the leader to, plus what is written during the purge delay and while the purge runs
 * (about 0.4 s per 64 MiB segment), plus one segment being deleted (renamed out of the log, cut a step at a time,
 * one at a time); snapshots add {@code keep + 1} times the state's size.
 * Durability defaults to {@code batch}: safety before speed. With {@code none}, a committed entry survives any
 * minority of machine crashes but not a majority at once (Aeron Cluster's default).
 */
public record NodeConfig(
    int memberId,
    List<Member> members,
    Path dataDir,
    TimeoutProfile timeouts,
    DurabilityPolicy durability,
    int segmentLength,
    int maxBatchLength,
    String serviceClass,
    long sessionTimeoutMs,
    long snapshotIntervalBytes,
    int snapshotKeep,
    MetricsSettings metrics,
    SecuritySettings security,
    String listenAddress,
    boolean standbySync,
    int standbyRelay,
    IdleSettings idle,
    ThreadingSettings threading,
    long purgeDelayMs,
    Path testSlowSyncFile,
    Path testClockOffsetFile)
{
    /**
     * @return the metrics port, 0 for off (see {@link #metrics()}).
     */
    public int metricsPort()
    {
        return metrics.port();
    }

    public static final String MEMBER_ID = "lockstep.member.id";
    public static final String MEMBERS = "lockstep.members";
    public static final String DATA_DIR = "lockstep.data.dir";
    public static final String TIMEOUTS = "lockstep.timeouts";
    public static final String DURABILITY = "lockstep.durability";
    public static final String SEGMENT_LENGTH = "lockstep.log.segment.length";
    public static final String MAX_BATCH = "lockstep.log.max.batch";
    public static final String SERVICE = "lockstep.service";
    public static final String SESSION_TIMEOUT_MS = "lockstep.session.timeout.ms";
    public static final String SNAPSHOT_INTERVAL_BYTES = "lockstep.snapshot.interval.bytes";
    public static final String SNAPSHOT_KEEP = "lockstep.snapshot.keep";
    public static final String PURGE_DELAY_MS = "lockstep.log.purge.delay.ms";
    /**
     * For tests only: an injected slow disk. While the named file exists, each sync of the log first waits the
     * milliseconds written in it (see {@code ArchiveLogConfig.slowSyncFile}).
     */
    public static final String TEST_SLOW_SYNC_FILE = "lockstep.test.slow.sync.file";
    /**
     * For tests only: a stepped wall clock. While the named file exists, the milliseconds written in it are added to
     * the system clock for this member's log time.
     */
    public static final String TEST_CLOCK_OFFSET_FILE = "lockstep.test.clock.offset.file";
    public static final String METRICS_PORT = MetricsSettings.PORT;
    public static final String LISTEN_ADDRESS = "lockstep.listen.address";
    public static final String STANDBY_SYNC = "lockstep.standby.sync";
    public static final String STANDBY_RELAY = "lockstep.standby.relay";

    /** A configuration problem, with a message that names the file, key and value. */
    public static final class ConfigException extends Exception
    {
        private static final long serialVersionUID = 1L;

        ConfigException(final String message)
        {
            super(message);
        }
    }

    /**
     * @param file      the properties file.
     * @param overrides values that win over the file's (the system properties).
     * @return the validated configuration.
     * @throws ConfigException naming what is missing or wrong.
     */
    public static NodeConfig load(final Path file, final Properties overrides) throws ConfigException
    {
        final Properties p = new Properties();
        try (Reader reader = Files.newBufferedReader(file))
        {
            p.load(reader);
        }
        catch (final NoSuchFileException ex)
        {
            throw new ConfigException("config file not found: " + file);
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            throw new ConfigException("cannot read config file " + file + ": " + ex.getMessage());
        }
        for (final String key : p.stringPropertyNames())
        {
            if ("lockstep.join".equals(key))
            {
                // Retired: a member whose data directory is empty now waits for the cluster by itself.
                System.getLogger(NodeConfig.class.getName()).log(System.Logger.Level.WARNING, file + ": " + key +
                    " is no longer needed and is ignored: a member with an empty data directory never votes or " +
                    "stands until the cluster's leader has sent it the log (docs/how-to/membership.md)");
            }
            else if (key.startsWith("lockstep.") && !ConfigKeys.ALL.contains(key))
            {
                // A warning, not a refusal: a file written for a newer member still starts an older one.
                System.getLogger(NodeConfig.class.getName()).log(System.Logger.Level.WARNING, file + ": " + key +
                    " is not a key this member reads (misspelt?); it is ignored. Every key: " +
                    "docs/reference/configuration.md");
            }
        }
        for (final String key : overrides.stringPropertyNames())
        {
            if (key.startsWith("lockstep."))
            {
                p.setProperty(key, overrides.getProperty(key));
            }
        }
        return parse(file.toString(), p);
    }

    /**
     * Read only the members list (for tools given a member's config).
     */
    public static List<Member> loadMembers(final Path file, final Properties overrides) throws ConfigException
    {
        return load(file, overrides).members();
    }

    static NodeConfig parse(final String source, final Properties p) throws ConfigException
    {
        return parse(source, p, SecuritySettings.Given.NONE, false);
    }

    /**
     * @param given        what was handed over as objects in place of keys (see {@link ClusterNodeBuilder}).
     * @param serviceGiven a service factory was handed over in place of {@link #SERVICE}.
     */
    // Longer than the method bound: one key after another, in the reference's order.
    @SuppressWarnings("checkstyle:MethodLength")
    static NodeConfig parse(
        final String source, final Properties p, final SecuritySettings.Given given, final boolean serviceGiven)
        throws ConfigException
    {
        final int memberId = intValue(source, p, MEMBER_ID, null);
        final List<Member> members = parseMembers(source, required(source, p, MEMBERS));
        final Path dataDir = Path.of(required(source, p, DATA_DIR));
        final String timeouts = p.getProperty(TIMEOUTS, "lan").trim().toUpperCase(Locale.ROOT);
        final String durability = p.getProperty(DURABILITY, "batch").trim().toUpperCase(Locale.ROOT);
        final int segmentLength = intValue(source, p, SEGMENT_LENGTH, ArchiveLogConfig.DEFAULT_SEGMENT_LENGTH);
        final int maxBatch = intValue(source, p, MAX_BATCH, ArchiveLogConfig.DEFAULT_MAX_BATCH_LENGTH);
        final String service = p.getProperty(SERVICE, "").trim();
        if (serviceGiven && !service.isEmpty())
        {
            throw new ConfigException(source + ": " + SERVICE + " is set and service(...) was given too: say which " +
                "one, not both");
        }
        final int sessionTimeoutMs = intValue(source, p, SESSION_TIMEOUT_MS, 10_000);
        if (sessionTimeoutMs < 100)
        {
            throw new ConfigException(source + ": " + SESSION_TIMEOUT_MS + " must be at least 100, not "
                + sessionTimeoutMs);
        }
        final long snapshotInterval;
        try
        {
            snapshotInterval = Long.parseLong(p.getProperty(SNAPSHOT_INTERVAL_BYTES, "134217728").trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(source + ": " + SNAPSHOT_INTERVAL_BYTES + " must be a whole number, not '" +
                p.getProperty(SNAPSHOT_INTERVAL_BYTES) + "'");
        }
        if (snapshotInterval != 0 && snapshotInterval < 64 * 1024)
        {
            throw new ConfigException(source + ": " + SNAPSHOT_INTERVAL_BYTES + " must be 0 (off) or at least 65536, " +
                "not " + snapshotInterval);
        }
        final MetricsSettings metrics = MetricsSettings.parse(source, p);
        final int purgeDelayMs = intValue(source, p, PURGE_DELAY_MS, 1000);
        if (purgeDelayMs < 0 || purgeDelayMs > 60_000)
        {
            throw new ConfigException(source + ": " + PURGE_DELAY_MS + " must be in [0, 60000], not " + purgeDelayMs);
        }
        final int snapshotKeep = intValue(source, p, SNAPSHOT_KEEP, 2);
        if (snapshotKeep < 1 || snapshotKeep > 100)
        {
            throw new ConfigException(source + ": " + SNAPSHOT_KEEP + " must be in [1, 100], not " + snapshotKeep);
        }

        final TimeoutProfile profile;
        final DurabilityPolicy policy;
        try
        {
            profile = TimeoutProfile.valueOf(timeouts);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(source + ": " + TIMEOUTS + " must be lan or wan, not '" + p.getProperty(TIMEOUTS)
                + "'");
        }
        try
        {
            policy = DurabilityPolicy.valueOf(durability);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(source + ": " + DURABILITY + " must be batch or none, not '" +
                p.getProperty(DURABILITY) + "'");
        }
        if (null != p.getProperty(MemorySettings.MEMORY))
        {
            try
            {
                MemorySettings.parse(p.getProperty(MemorySettings.MEMORY));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(source + ": " + ex.getMessage());
            }
        }
        if (members.stream().noneMatch(m -> m.id() == memberId))
        {
            throw new ConfigException(source + ": " + MEMBER_ID + "=" + memberId + " is not in " + MEMBERS);
        }
        try
        {
            new ArchiveLogConfig().directory(dataDir).segmentLength(segmentLength).maxBatchLength(maxBatch).validate();
            ConsensusConfig.of(memberId, members, profile);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(source + ": " + ex.getMessage());
        }
        return new NodeConfig(memberId, members, dataDir, profile, policy, segmentLength, maxBatch,
            service.isEmpty() ? null : service, sessionTimeoutMs, snapshotInterval, snapshotKeep, metrics,
            SecuritySettings.parse(source, configDirectory(source), p, given),
            p.getProperty(LISTEN_ADDRESS, "").trim().isEmpty() ? null : p.getProperty(LISTEN_ADDRESS).trim(),
            standbySync(source, p, members), standbyRelay(source, p, members),
            IdleSettings.parse(source, p), threading(source, p, serviceGiven || !service.isEmpty()), purgeDelayMs,
            testPath(source, p, TEST_SLOW_SYNC_FILE), testPath(source, p, TEST_CLOCK_OFFSET_FILE));
    }

    /** The JVM property that lets a member read the {@code lockstep.test.} keys: fault injection, for tests only. */
    public static final String TEST_HOOKS_PROPERTY = "lockstep.test.hooks";

    private static Path testPath(final String source, final Properties p, final String key) throws ConfigException
    {
        final String value = p.getProperty(key, "").trim();
        if (value.isEmpty())
        {
            return null;
        }
        if (!Boolean.getBoolean(TEST_HOOKS_PROPERTY))
        {
            throw new ConfigException(source + ": " + key + " injects faults, for tests only; a member reads it only " +
                "when its JVM runs with -D" + TEST_HOOKS_PROPERTY + "=true. Remove it from the configuration");
        }
        return Path.of(value);
    }

    private static ThreadingSettings threading(final String source, final Properties p, final boolean service)
        throws ConfigException
    {
        final ThreadingSettings threading = ThreadingSettings.parse(source, p);
        if (threading.dedicated() && !service)
        {
            throw new ConfigException(source + ": " + ThreadingSettings.THREADING + "=dedicated needs a service (" +
                SERVICE + "): a member without one has no service thread to run");
        }
        return threading;
    }

    private static int standbyRelay(final String source, final Properties p, final List<Member> members)
        throws ConfigException
    {
        final String value = p.getProperty(STANDBY_RELAY, "").trim();
        if (value.isEmpty())
        {
            return -1;
        }
        try
        {
            final int id = Integer.parseInt(value);
            if (members.stream().noneMatch(m -> m.id() == id && !m.voting()))
            {
                throw new ConfigException(source + ": " + STANDBY_RELAY + "=" + id + " is not a standby (a " +
                    "/nonvoting member in " + MEMBERS + ")");
            }
            return id;
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(source + ": " + STANDBY_RELAY + " must be a member id, not '" + value + "'");
        }
    }

    private static boolean standbySync(final String source, final Properties p, final List<Member> members)
        throws ConfigException
    {
        final String value = p.getProperty(STANDBY_SYNC, "false").trim();
        if (!"true".equals(value) && !"false".equals(value))
        {
            throw new ConfigException(source + ": " + STANDBY_SYNC + " must be true or false, not '" + value + "'");
        }
        if ("true".equals(value) && members.stream().allMatch(Member::voting))
        {
            throw new ConfigException(source + ": " + STANDBY_SYNC + "=true needs a standby (a /nonvoting member in " +
                MEMBERS + ") to wait for");
        }
        return "true".equals(value);
    }

    private static Path configDirectory(final String source)
    {
        final Path parent = Path.of(source).toAbsolutePath().getParent();
        return null == parent ? Path.of(".") : parent;
    }

    private static List<Member> parseMembers(final String source, final String value) throws ConfigException
    {
        final List<Member> members = new ArrayList<>();
        for (final String raw : value.split(","))
        {
            final String entry = raw.trim();
            if (entry.isEmpty())
            {
                continue;
            }
            final String problem = source + ": " + MEMBERS + " entry '" + entry + "' ";
            final int eq = entry.indexOf('=');
            if (eq <= 0)
            {
                throw new ConfigException(problem + "is not id=host:port");
            }
            String address = entry.substring(eq + 1);
            boolean voting = true;
            if (address.endsWith("/nonvoting"))
            {
                voting = false;
                address = address.substring(0, address.length() - "/nonvoting".length());
            }
            final int colon = address.lastIndexOf(':');
            if (colon <= 0)
            {
                throw new ConfigException(problem + "has no host:port");
            }
            try
            {
                final int id = Integer.parseInt(entry.substring(0, eq).trim());
                final int port = Integer.parseInt(address.substring(colon + 1));
                if (port < 1 || port > 65535)
                {
                    throw new ConfigException(problem + "has port out of range");
                }
                members.add(new Member(id, address.substring(0, colon), port, voting));
            }
            catch (final NumberFormatException ex)
            {
                throw new ConfigException(problem + "has a non-numeric id or port");
            }
        }
        if (members.isEmpty())
        {
            throw new ConfigException(source + ": " + MEMBERS + " lists no members");
        }
        return members;
    }

    private static String required(final String source, final Properties p, final String key) throws ConfigException
    {
        final String value = p.getProperty(key);
        // trim() drops every control character, isBlank() only white space: test what is returned.
        if (null == value || value.trim().isEmpty())
        {
            throw new ConfigException(source + ": missing required key " + key);
        }
        return value.trim();
    }

    static int intValue(final String source, final Properties p, final String key, final Integer fallback)
        throws ConfigException
    {
        final String value = null == fallback ? required(source, p, key) : p.getProperty(key);
        if (null == value || value.isBlank())
        {
            return fallback;
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(source + ": " + key + " must be a whole number, not '" + value + "'");
        }
    }
}
