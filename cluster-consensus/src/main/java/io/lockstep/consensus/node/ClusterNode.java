package io.lockstep.consensus.node;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.BackgroundPriority;
import io.lockstep.archive.RolloverRehearsal;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.JvmOptions;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.SelectorIdleStrategy;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.ClusterIdentity;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.Membership;
import io.lockstep.consensus.service.ServiceHandoff;
import io.lockstep.consensus.service.ServiceMember;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileElectionState;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemNanoClock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Security;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One member as a process: {@code bin/lockstep node --config FILE}. Opens (and recovers) the log and the election
 * state in the data directory, listens for peers, and runs the consensus agent on one thread that idles in its
 * socket selector ({@code SelectorIdleStrategy}: it wakes when a message arrives; a busy-spinning member would starve
 * the others on a two-core machine, and a parking one wakes late or needlessly; {@code lockstep.idle} chooses
 * otherwise on machines with cores to spare, see {@link IdleSettings}; {@code lockstep.threading=dedicated} gives the
 * service a thread of its own, see {@link ThreadingSettings}). Prints one line starting
 * {@code lockstep node <id> ready} once it listens. Any error inside the agent stops the member (exit 1) rather than
 * let it continue with state it cannot trust.
 */
public final class ClusterNode implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(ClusterNode.class.getName());

    private final NodeConfig config;
    private final Agent agent;
    private final AgentRunner runner;
    /** DEDICATED mode's service thread; null in SHARED mode. */
    private final AgentRunner serviceRunner;
    private final MetricsServer metricsServer;
    private final MemberMetrics metrics;
    /** The service instances this member runs, watched for sharing with another member; null without a service. */
    private final ServiceInstances services;

    /** Bound on open client sessions. Part of replicated state: {@code tool replay} must use the same. */
    public static final int MAX_SESSIONS = 4096;
    /** Egress kept per session, for resending after a failover. Part of replicated state. */
    public static final int EGRESS_BUFFER_BYTES = 256 * 1024;
    /** Bound on scheduled timers. Part of replicated state. */
    public static final int MAX_TIMERS = 64 * 1024;
    private final Thread thread;
    private volatile Throwable fatal;
    private volatile String removedReason;

    /** Room left in a batch for the frame headers around a block of log a leader sends. */
    private static final int BLOCK_HEADROOM = 1024;
    /** A snapshot chunk, the largest message besides an append block. */
    private static final int SNAPSHOT_CHUNK_BYTES = 64 * 1024;
    /** The largest message header a member sends. */
    private static final int MESSAGE_HEADROOM = 64;

    /**
     * @param serviceFactory makes the service (at start, and again each time a snapshot is installed), or null for
     *                       a member that runs consensus only.
     */
    private ClusterNode(final NodeConfig config, final Supplier<? extends ClusteredService> serviceFactory)
    {
        this.config = config;
        createDataDirectory(config);
        final ConsensusConfig consensusConfig = consensusConfig(config);
        final FileElectionState electionState = new FileElectionState(config.dataDir());
        checkStartable(config, electionState);
        electionState.reserveSpace();
        final TcpTransport transport = new TcpTransport(config.memberId(), listenView(config), config.segmentLength(),
            consensusConfig.maxBlockBytes() + SNAPSHOT_CHUNK_BYTES + MESSAGE_HEADROOM, config.security().secret(),
            MemberProtocolShapes.create());
        // The seed is the one non-deterministic input, chosen here at the edge and logged.
        final long seed = System.nanoTime() ^ ((long)config.memberId() << 48);
        final ArchiveRaftLog raftLog = openLog(config, electionState, transport);
        final ConsensusAgent consensus;
        final ServiceHandoff handoff = config.threading().dedicated() ? new ServiceHandoff(true) : null;
        services = null == serviceFactory ? null : new ServiceInstances(serviceFactory);
        try
        {
            // Anything that fails from here to the start (the service, its snapshot, the TLS files) must not leave
            // the port and the log open.
            consensus = new ConsensusAgent(consensusConfig, new SystemNanoClock(),
                new SampledWallClock(config.testClockOffsetFile()), transport, raftLog,
                electionState, new Random(seed));
            this.metrics = consensus.metrics();
            agent = null == services ? consensus : newServiceMember(config, consensus, transport, raftLog, handoff);
            transport.limits(config.security().limits()).toolSecret(config.security().toolSecret())
                .tls(config.security().tls().files(), config.security().tls().links());
        }
        catch (final RuntimeException ex)
        {
            if (null != services)
            {
                services.release();
            }
            raftLog.close();
            transport.close();
            throw ex;
        }
        // Refusals reach the member's error log (tool errors) and counters, on the member thread that polls.
        transport.problemListener(new MemberProblems(consensus.metrics(), consensus.errors()));
        raftLog.flushTimes(consensus.metrics()::recordFlush);
        raftLog.onDurable(transport::wakeup);
        raftLog.writeProblems(problem -> onLogWriteProblem(config, consensus, problem));
        logSecurity(config);
        LOGGER.log(System.Logger.Level.INFO, "member {0} election randomness seed {1}", config.memberId(), seed);

        final IdleStrategy idle = config.idle().newIdleStrategy(transport);
        if (null != handoff)
        {
            // The service thread's output ends the consensus thread's wait in its selector.
            handoff.wakeConsensus(transport::wakeup);
            if (idle instanceof SelectorIdleStrategy selectorIdle)
            {
                selectorIdle.sleepGuard(handoff);
            }
            serviceRunner = new AgentRunner(config.threading().newServiceIdleStrategy(handoff), t -> { }, null,
                ((ServiceMember)agent).serviceAgent());
        }
        else
        {
            serviceRunner = null;
        }
        runner = new AgentRunner(idle, t -> { }, null, new Guarded(consensus, transport));
        if (null != serviceRunner)
        {
            AgentRunner.startOnThread(serviceRunner);
        }
        thread = AgentRunner.startOnThread(runner);
        metricsServer = startMetrics(config, consensus);
    }

    private static void createDataDirectory(final NodeConfig config)
    {
        try
        {
            Files.createDirectories(config.dataDir());
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create data directory " + config.dataDir() + ": "
                + ex.getMessage());
        }
    }

    private static ConsensusConfig consensusConfig(final NodeConfig config)
    {
        // The default bounds, but a block always below the log's batch bound.
        final int maxBlockBytes =
            Math.min(ConsensusConfig.DEFAULT_MAX_BLOCK_BYTES, config.maxBatchLength() - BLOCK_HEADROOM);
        return new ConsensusConfig().memberId(config.memberId()).members(config.members()).timeouts(config.timeouts())
            .maxBlockBytes(maxBlockBytes)
            .syncStandby(config.standbySync()).relay(config.standbyRelay()).validate();
    }

    /** Refuse to start a member a promotion removed, or one whose TLS files do not prove who it is. */
    private static void checkStartable(final NodeConfig config, final FileElectionState electionState)
    {
        final String removed = Membership.removedReason(config.memberId(), electionState);
        if (null != removed)
        {
            throw new IllegalStateException(removed);
        }
        try
        {
            config.security().tls().checkMember("member " + config.memberId());
        }
        catch (final NodeConfig.ConfigException ex)
        {
            throw new IllegalStateException(ex.getMessage(), ex);
        }
    }

    /**
     * Open (and recover) the log; a log that cannot be opened, or that outlived its election state, must not leave
     * the port open.
     */
    private static ArchiveRaftLog openLog(
        final NodeConfig config, final FileElectionState electionState, final TcpTransport transport)
    {
        final ArchiveLogConfig logConfig = new ArchiveLogConfig()
            .directory(config.dataDir().resolve("log"))
            .segmentLength(config.segmentLength())
            .maxBatchLength(config.maxBatchLength())
            .durability(config.durability())
            .slowSyncFile(config.testSlowSyncFile());
        final ArchiveRaftLog raftLog;
        try
        {
            // Staggered by member id: see lockstep.log.purge.delay.ms.
            raftLog = new ArchiveRaftLog(logConfig,
                TimeUnit.MILLISECONDS.toNanos(config.purgeDelayMs() * (1L + config.memberId())));
        }
        catch (final RuntimeException ex)
        {
            transport.close();
            throw ex;
        }
        if (electionState.fromOlderVersion() && 0 == raftLog.pendingPosition() && 0 == raftLog.startPosition())
        {
            // An older version's member with nothing in its log (one joining with lockstep.join when it stopped):
            // it has no data to trust in an election, so it waits as a new member does.
            electionState.saveIdentity(ClusterIdentity.NONE);
        }
        if (!electionState.existed() && (raftLog.pendingPosition() > 0 || raftLog.startPosition() > 0))
        {
            // A member with a log has held a term, and may have voted in it: starting as new could vote twice.
            final long end = raftLog.pendingPosition();
            raftLog.close();
            transport.close();
            throw new IllegalStateException("member " + config.memberId() + ": " + config.dataDir().resolve(
                FileElectionState.FILE_NAME) + " is missing but the log holds entries up to position " + end +
                ": the member cannot know the term and vote it last had, and could vote twice in one term. Restore " +
                "the file from where it was lost, or move the data directory away: started empty, the member " +
                "waits for the cluster's leader to send it the log");
        }
        return raftLog;
    }

    private ServiceMember newServiceMember(
        final NodeConfig config,
        final ConsensusAgent consensus,
        final TcpTransport transport,
        final ArchiveRaftLog raftLog,
        final ServiceHandoff handoff)
    {
        final FileSnapshotStorage snapshots =
            new FileSnapshotStorage(config.dataDir(), snapshotWriteDelayNs(config.memberId(), config.purgeDelayMs()));
        return new ServiceMember(consensus, transport, raftLog, services, snapshots,
            new ServiceMember.SnapshotSettings(config.snapshotIntervalBytes(), config.snapshotKeep(),
                new SystemNanoClock()),
            TimeUnit.MILLISECONDS.toNanos(config.sessionTimeoutMs()), MAX_SESSIONS, EGRESS_BUFFER_BYTES, MAX_TIMERS,
            new BackoffIdleStrategy(), handoff)
            .clientAuthenticator(config.security().authenticator())
            .sessionLimits(config.security().sessionLimits())
            .memorySessionLimit(sessionLimit(config));
    }

    /**
     * Member i writes a snapshot (1 + i mod 10) tenths of the purge delay after its service made it (100 ms steps by
     * default), for the reason its purges wait: every member snapshots at the same log position, and the default
     * snapshot interval is a whole number of segments, so the three writes started together and on a segment
     * rollover, and on two cores the members' threads then all waited for a CPU (benchmarks/results/history.md). A
     * small snapshot's write takes 5-15 ms there, so 100 ms steps keep members 0-9 from starting together. Tied to
     * the purge delay so that one setting says how much later than the snapshot's position the log is cut (0: at
     * once, for both); a write someone waits for (a shutdown, a tool, a leader's chunks) is not delayed.
     */
    static long snapshotWriteDelayNs(final int memberId, final long purgeDelayMs)
    {
        return TimeUnit.MILLISECONDS.toNanos(purgeDelayMs / 10 * (1 + Math.floorMod(memberId, 10)));
    }

    /** The log found it cannot write (a full disk), or writes again (null): metric, readiness, error log. */
    private static void onLogWriteProblem(final NodeConfig config, final ConsensusAgent consensus, final String problem)
    {
        consensus.metrics().set(MemberMetrics.LOG_WRITE_BLOCKED, null == problem ? 0 : 1);
        if (null != problem)
        {
            consensus.errors().record("disk", "member " + config.memberId() + " cannot write its log, so it " +
                "acknowledges nothing new and leads no more until there is space: " + problem);
        }
    }

    private static int sessionLimit(final NodeConfig config)
    {
        final long heap = Runtime.getRuntime().maxMemory();
        final int limit = MemorySettings.sessionLimit(heap, MAX_SESSIONS, EGRESS_BUFFER_BYTES);
        final long direct = MemorySettings.maxDirectBytes();
        LOGGER.log(System.Logger.Level.INFO, "member {0}: heap {1} MiB, direct buffers {2} MiB: up to {3} sessions " +
            "with full egress buffers ({4})", config.memberId(), heap >> 20, direct >> 20, limit,
            MemorySettings.MEMORY);
        final long directNeeded = config.security().limits().clientBufferBytes() +
            config.security().limits().maxClients() * 16L * 1024 +
            config.members().size() * 4L * (ConsensusConfig.DEFAULT_MAX_BLOCK_BYTES + SNAPSHOT_CHUNK_BYTES) +
            2L * config.maxBatchLength();
        if (directNeeded > direct)
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: its connections and log may need up to {1} MiB of " +
                "direct buffers ({2} MiB of them for clients: lockstep.client.buffers.max.bytes) but the JVM allows " +
                "{3} MiB: raise {4}, or a burst of client traffic can fail the member", config.memberId(),
                directNeeded >> 20, config.security().limits().clientBufferBytes() >> 20, direct >> 20,
                MemorySettings.MEMORY);
        }
        return limit;
    }

    private static void logSecurity(final NodeConfig config)
    {
        for (final String warning : config.security().warnings())
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: {1}", config.memberId(), warning);
        }
        if (null != config.security().tls().files() && null == System.getProperty("jdk.tls.namedGroups"))
        {
            // Only the launcher may set it (it is JVM-wide): a member in another JVM says what it costs instead.
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: this JVM offers every TLS key-exchange group, so a " +
                "client may pick a finite-field one (ffdhe8192: 20-80 ms of this member''s CPU per handshake). Start " +
                "the JVM with -Djdk.tls.namedGroups=x25519,secp256r1,secp384r1, as bin/lockstep does",
                config.memberId());
        }
        if (null != config.security().tls().files())
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0}: TLS required on {1} links, accepted on every link; " +
                "this member proves {2}", config.memberId(), config.security().tls().linkNames(),
                config.security().tls().files().describe());
        }
    }

    /**
     * The member's agent as the runner sees it: any error stops the member (kept for {@link #close} to report), as
     * does a promotion that fenced it off or an orderly shutdown that finished.
     */
    private final class Guarded implements Agent
    {
        private final ConsensusAgent consensus;
        private final TcpTransport transport;

        Guarded(final ConsensusAgent consensus, final TcpTransport transport)
        {
            this.consensus = consensus;
            this.transport = transport;
        }

        public int doWork()
        {
            final int work;
            try
            {
                work = agent.doWork();
                consensus.metrics().set(MemberMetrics.CLIENT_CONNECTIONS, transport.clientConnections());
            }
            catch (final Throwable t)
            {
                fatal = t;
                throw new AgentTerminationException(t);
            }
            if (null != consensus.membershipExchange().removedReason())
            {
                // Fenced by a promotion of the standby zone: stopping is the one safe thing left to do.
                removedReason = consensus.membershipExchange().removedReason();
                throw new AgentTerminationException(removedReason);
            }
            if (agent instanceof ServiceMember member && member.isStopped())
            {
                // Orderly shutdown finished: the runner closes the member (log synced, files released).
                throw new AgentTerminationException("orderly shutdown");
            }
            return work;
        }

        public void onClose()
        {
            // Pauses a DEDICATED member's service thread before the log closes; that thread stops after.
            agent.onClose();
            if (null != serviceRunner)
            {
                serviceRunner.close();
            }
            if (null != services)
            {
                services.release();
            }
        }

        public String roleName()
        {
            return agent.roleName();
        }
    }

    /**
     * @return a new wall clock for a member's log time, which allocates nothing ({@link SampledWallClock}).
     */
    public static EpochNanoClock newWallClock()
    {
        return new SampledWallClock(null);
    }

    /**
     * The members as this member's transport sees them: its own entry is where it listens (the only use of it), which
     * {@code lockstep.listen.address} may set apart from the address peers dial.
     */
    private static List<Member> listenView(final NodeConfig config)
    {
        if (null == config.listenAddress())
        {
            return config.members();
        }
        return config.members().stream().map(m -> m.id() != config.memberId() ? m :
            new Member(m.id(), config.listenAddress(), m.port(), m.voting())).toList();
    }

    private MetricsServer startMetrics(final NodeConfig config, final ConsensusAgent consensus)
    {
        if (0 == config.metricsPort())
        {
            return null;
        }
        try
        {
            return new MetricsServer(config.metrics(), config.memberId(), consensus.metrics(),
                () -> thread.isAlive() && null == fatal, () -> consensus.metrics().set(
                    MemberMetrics.TLS_CERTIFICATE_EXPIRY, config.security().tls().expiry()));
        }
        catch (final IOException ex)
        {
            runner.close();
            throw new IllegalStateException(NodeConfig.METRICS_PORT + "=" + config.metricsPort() + " on " +
                config.metrics().address() +
                ": cannot serve metrics there: " + ex.getMessage(), ex);
        }
    }

    /**
     * @return a new instance of a ClusteredService class named in configuration (no-argument constructor).
     * @throws IllegalStateException naming the class if it cannot be made.
     */
    public static ClusteredService newService(final String className)
    {
        try
        {
            return (ClusteredService)Class.forName(className).getDeclaredConstructor().newInstance();
        }
        catch (final ReflectiveOperationException | ClassCastException ex)
        {
            throw new IllegalStateException(NodeConfig.SERVICE + "=" + className +
                " is not a ClusteredService with a public no-argument constructor on the classpath: " + ex);
        }
    }

    /**
     * @return a builder for a member started from code, in this process: no properties file, the service handed over
     * as a factory. See {@link ClusterNodeBuilder}.
     */
    public static ClusterNodeBuilder builder()
    {
        return new ClusterNodeBuilder();
    }

    /**
     * Start a member that runs the service its configuration names ({@code lockstep.service}), or consensus only.
     *
     * @param config its configuration.
     * @return the running member.
     */
    public static ClusterNode start(final NodeConfig config)
    {
        return startMember(config, null == config.serviceClass() ? null : () -> newService(config.serviceClass()));
    }

    /**
     * Start a member that runs the service the factory makes (see {@link ClusterNodeBuilder#service}).
     *
     * @param config         its configuration, which must not name a service class as well.
     * @param serviceFactory makes the service: once at start, and again each time a snapshot is installed (a new
     *                       instance each call).
     * @return the running member.
     * @throws IllegalArgumentException if the configuration also names a service class.
     */
    public static ClusterNode start(final NodeConfig config, final Supplier<? extends ClusteredService> serviceFactory)
    {
        Objects.requireNonNull(serviceFactory, "serviceFactory");
        if (null != config.serviceClass())
        {
            throw new IllegalArgumentException("the configuration names a service (" + NodeConfig.SERVICE + "=" +
                config.serviceClass() + ") and a service factory was given too: say which one, not both");
        }
        return startMember(config, serviceFactory);
    }

    private static ClusterNode startMember(
        final NodeConfig config, final Supplier<? extends ClusteredService> serviceFactory)
    {
        if (null == serviceFactory && config.threading().dedicated())
        {
            // The builder's config() checks this against the factory it was given; a config started without one
            // must not skip the check.
            throw new IllegalArgumentException(ThreadingSettings.THREADING + "=dedicated needs a service to run on " +
                "its own thread, and this member has none");
        }
        JvmOptions.check();
        // Before the rehearsal below starts the first background thread. JVM-wide, as that thread is.
        BackgroundPriority.nice(config.idle().backgroundNice());
        PreloadedClasses.load();
        // A log's first segment rollover in a JVM links everything it calls, about 15 ms of the member's thread
        // under load: done here, on a throwaway log, before the member serves (about 0.1 s at start).
        RolloverRehearsal.run();
        JitSettings.prepare(config);
        return new ClusterNode(config, serviceFactory);
    }

    /**
     * A member of a {@link JitRehearsal}: started as any other, less the preparations of {@link #startMember}, which
     * the member being prepared makes.
     */
    static ClusterNode startRehearsalMember(
        final NodeConfig config, final Supplier<? extends ClusteredService> serviceFactory)
    {
        return new ClusterNode(config, serviceFactory);
    }

    /**
     * @return this member's counters and gauges (readable from any thread).
     */
    public MemberMetrics metrics()
    {
        return metrics;
    }

    /**
     * @return the error that stopped the member, or null while it runs or after a clean close.
     */
    public Throwable fatalError()
    {
        return fatal;
    }

    /**
     * Wait until the member stops (close, or a fatal error).
     */
    public void awaitTermination() throws InterruptedException
    {
        thread.join();
    }

    public void close()
    {
        if (null != metricsServer)
        {
            metricsServer.close();
        }
        runner.close();
    }

    public static void main(final String[] args) throws Exception
    {
        TlsSettings.restrictKeyExchangeGroups();
        if (args.length != 2 || !"--config".equals(args[0]))
        {
            System.err.println("usage: lockstep node --config FILE   (keys can be overridden with -Dkey=value)");
            System.exit(2);
        }
        final NodeConfig config;
        try
        {
            config = NodeConfig.load(Path.of(args[1]), System.getProperties());
        }
        catch (final NodeConfig.ConfigException ex)
        {
            System.err.println("lockstep node: config error: " + ex.getMessage());
            System.exit(2);
            return;
        }
        run(config, node -> { });
    }

    /**
     * Run a member as a process: start it, say it is ready, and exit when it stops (0 after an orderly shutdown,
     * 1 on an error). For launchers of particular kinds of member (the standby).
     *
     * @param config    the member's configuration.
     * @param onStarted told once the member runs (on this thread), before it says it is ready.
     */
    public static void run(final NodeConfig config, final Consumer<ClusterNode> onStarted)
        throws InterruptedException
    {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        // Peers named by host name may come back at another address (a restarted container, a rescheduled pod):
        // look names up again within a second, and never remember a failed lookup.
        if (null == Security.getProperty("networkaddress.cache.ttl") ||
            "-1".equals(Security.getProperty("networkaddress.cache.ttl")))
        {
            Security.setProperty("networkaddress.cache.ttl", "1");
        }
        Security.setProperty("networkaddress.cache.negative.ttl", "0");
        final ClusterNode node;
        try
        {
            node = start(config);
        }
        catch (final RuntimeException ex)
        {
            System.err.println("lockstep node " + config.memberId() + ": cannot start: " + ex.getMessage());
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "lockstep-shutdown"));
        onStarted.accept(node);
        final Member self = config.members().stream()
            .filter(m -> m.id() == config.memberId()).findFirst().orElseThrow();
        System.out.println("lockstep node " + config.memberId() + " ready: listening on " + self.host() + ":" +
            self.port() + ", data " + config.dataDir() + ", timeouts " + config.timeouts().name().toLowerCase() +
            ", durability " + config.durability().name().toLowerCase() +
            (0 == config.metricsPort() ? "" : ", metrics on http://" + config.metrics().address() + ":" +
                config.metricsPort() + "/metrics") +
            (self.voting() ? "" : ", standby (non-voting)"));
        System.out.flush();
        node.awaitTermination();
        if (null != node.fatalError())
        {
            System.err.println("lockstep node " + config.memberId() + " stopped on an error: " + node.fatalError());
            node.fatalError().printStackTrace();
            Runtime.getRuntime().halt(1);
        }
        if (null != node.removedReason)
        {
            System.err.println("lockstep node " + config.memberId() + " stopped: " + node.removedReason);
            System.err.flush();
            Runtime.getRuntime().halt(3);
        }
        System.out.println("lockstep node " + config.memberId() + " stopped: orderly shutdown");
        System.out.flush();
        System.exit(0);
    }
}
