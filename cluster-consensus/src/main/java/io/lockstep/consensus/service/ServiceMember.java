package io.lockstep.consensus.service;

import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.RaftLog;
import io.lockstep.consensus.ServiceHooks;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.log.ClusterAction;
import io.lockstep.consensus.log.ClusterActionRequestEncoder;
import io.lockstep.consensus.log.MessageHeaderEncoder;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * A member running a service: consensus, the service container and client sessions in one duty cycle (the SHARED
 * threading mode: one thread per member, which suits a two-core machine). Consensus first (messages in, replication,
 * commit), then the container applies what is newly committed, then the session layer does its leader duties, then
 * snapshot duties, and what they sent is flushed. In the DEDICATED mode the service runs on a thread of its own
 * ({@link ServiceThreadAgent}) and this duty cycle, instead of applying, follows a copy of the container that
 * replays what the service did ({@link ServiceThreadBridge}); the rest is the same.
 * <p>
 * Snapshots: the leader appends a cluster-action SNAPSHOT entry every {@code intervalBytes} of log (and when a tool
 * asks); every member takes its snapshot when it applies that entry; the image is written by the storage in the
 * background; once durable, older snapshots beyond {@code keep} are deleted and the log below the oldest one kept is
 * purged (see {@link ConsensusAgent#compactLog} for the bound lagging followers put on that).
 */
public final class ServiceMember implements Agent, ServiceHooks
{
    private static final System.Logger LOGGER = System.getLogger(ServiceMember.class.getName());
    private static final int MAX_TOOL_REQUESTS = 16;

    /**
     * @param intervalBytes a snapshot every this many bytes of log; 0 for none but those asked for.
     * @param keep          snapshots kept (at least 1); the log below the oldest kept is purged.
     * @param pauseClock    measures the services' pause while a snapshot is taken (reported only).
     */
    public record SnapshotSettings(long intervalBytes, int keep, NanoClock pauseClock)
    {
        public SnapshotSettings
        {
            if (intervalBytes < 0 || keep < 1)
            {
                throw new IllegalArgumentException("snapshot interval must be >= 0 and keep >= 1: " + intervalBytes +
                    ", " + keep);
            }
        }
    }

    private final ConsensusAgent consensus;
    private final Transport transport;
    private final RaftLog log;
    private final Supplier<ClusteredService> serviceFactory;
    private final SnapshotStorage storage;
    private final SnapshotSettings settings;
    private final long sessionTimeoutNs;
    private final int maxSessions;
    /** The snapshot write problem last put in the error log, so that each is recorded once. */
    private String reportedSnapshotProblem;
    private final int egressBufferBytes;
    private final int maxTimers;
    private final IdleStrategy idleStrategy;
    /** DEDICATED mode's consensus-thread side; null in SHARED mode. */
    private final ServiceThreadBridge bridge;
    private final UnsafeBuffer actionBuffer = new UnsafeBuffer(new byte[64]);
    private final ClusterActionRequestEncoder actionEncoder = new ClusterActionRequestEncoder();
    private final MessageHeaderEncoder actionHeader = new MessageHeaderEncoder();
    private final int[] toolEndpoints = new int[MAX_TOOL_REQUESTS];
    private final long[] toolCorrelationIds = new long[MAX_TOOL_REQUESTS];
    private final long[] toolPositions = new long[MAX_TOOL_REQUESTS];
    /** True: answered once the entry is applied here (suspend, resume); false: once a snapshot there is durable. */
    private final boolean[] toolWaitsForApply = new boolean[MAX_TOOL_REQUESTS];
    private int toolRequests;

    private ClusteredService service;
    private ClientAuthenticator authenticator = ClientAuthenticator.ACCEPT_ALL;
    private SessionLimits sessionLimits = SessionLimits.DEFAULTS;
    /** Null: the session ingress's own SecureRandom. */
    private RandomGenerator sessionSecrets;
    private ServiceContainer container;
    private SessionIngress sessions;
    private SnapshotImage pendingImage;
    /** Two images, alternated: one may be with storage while the next snapshot is serialised into the other. */
    private final SnapshotImage[] images = new SnapshotImage[2];
    private SnapshotImage writingImage;
    private long requestedSnapshotAt = -1;
    private long retainedFor = -1;
    private long snapshotsTaken;
    private long lastPauseNs;
    private long maxPauseNs;
    private int lastImageLength;
    /** Set once the member's snapshot at an applied shutdown entry is durable (leader: once it may stop too). */
    private boolean stopped;
    private long shutdownDeadlineNs = -1;
    private static final long SHUTDOWN_LEADER_WAIT_NS = 5_000_000_000L;

    /**
     * A member without snapshots, running one service instance.
     */
    public ServiceMember(
        final ConsensusAgent consensus,
        final Transport transport,
        final RaftLog log,
        final ClusteredService service,
        final long sessionTimeoutNs,
        final int maxSessions,
        final int egressBufferBytes,
        final int maxTimers,
        final IdleStrategy idleStrategy)
    {
        this(consensus, transport, log, oneInstance(service), null, new SnapshotSettings(0, 1, () -> 0),
            sessionTimeoutNs, maxSessions, egressBufferBytes, maxTimers, idleStrategy, null);
    }

    /**
     * @param consensus         this member's consensus agent.
     * @param transport         the transport the consensus agent uses.
     * @param log               the consensus agent's log.
     * @param serviceFactory    makes the user's service: once at start, and again when a snapshot is installed.
     * @param storage           the member's snapshots, or null for none.
     * @param settings          when to take snapshots and how many to keep.
     * @param sessionTimeoutNs  silent sessions are closed after this.
     * @param maxSessions       bound on open sessions.
     * @param egressBufferBytes bytes of recent egress kept per session for resending after a failover.
     * @param maxTimers         bound on scheduled timers.
     * @param idleStrategy      handed to the service.
     * @param handoff           shared with the service thread in the DEDICATED threading mode: the service runs on
     *                          a thread of its own, {@link #serviceAgent()}, which the caller runs (on a thread, or
     *                          interleaved with this one when the handoff says so); null for SHARED (one thread
     *                          runs everything).
     */
    public ServiceMember(
        final ConsensusAgent consensus,
        final Transport transport,
        final RaftLog log,
        final Supplier<ClusteredService> serviceFactory,
        final SnapshotStorage storage,
        final SnapshotSettings settings,
        final long sessionTimeoutNs,
        final int maxSessions,
        final int egressBufferBytes,
        final int maxTimers,
        final IdleStrategy idleStrategy,
        final ServiceHandoff handoff)
    {
        this.consensus = consensus;
        this.bridge = null == handoff ? null : new ServiceThreadBridge(consensus.memberId(), handoff,
            this::onSnapshotTaken, this::imageInUse);
        this.transport = transport;
        this.log = log;
        this.serviceFactory = serviceFactory;
        this.storage = storage;
        this.settings = settings;
        this.sessionTimeoutNs = sessionTimeoutNs;
        this.maxSessions = maxSessions;
        this.egressBufferBytes = egressBufferBytes;
        this.maxTimers = maxTimers;
        this.idleStrategy = idleStrategy;

        final SnapshotStorage.Loaded loaded = null == storage ? null : storage.loadLatest();
        if (null != loaded)
        {
            consensus.startFromSnapshot(loaded.image().logPosition(), loaded.image().term());
            consensus.observeLogTime(loaded.image().timestamp());
            LOGGER.log(System.Logger.Level.INFO, "member {0} starts from snapshot {1} at position {2}",
                consensus.memberId(), loaded.description(), loaded.image().logPosition());
        }
        else if (log.startPosition() > 0)
        {
            throw new IllegalStateException("member " + consensus.memberId() + ": the log starts at " +
                log.startPosition() + " (purged) and no usable snapshot covers what came before; to rejoin from " +
                "the leader's snapshot, move this member's data directory away and start it empty");
        }
        consensus.attachService(storage, this);
        startContainer(null == loaded ? null : loaded.image());
    }

    private static Supplier<ClusteredService> oneInstance(final ClusteredService service)
    {
        final ClusteredService[] once = { service };
        return () ->
        {
            if (null == once[0])
            {
                throw new IllegalStateException("installing a snapshot needs a new service instance: give the " +
                    "member a service factory");
            }
            final ClusteredService s = once[0];
            once[0] = null;
            return s;
        };
    }

    private void startContainer(final SnapshotImage image)
    {
        final ClusteredService next = serviceFactory.get();
        if (null != service && next == service)
        {
            // The old instance holds the state before the snapshot: loading the snapshot into it as well would
            // apply those entries twice on this member only.
            throw new IllegalStateException("the service factory returned the same instance again: it must return " +
                "a new one on every call (MyService::new), since a member makes a new service to install a snapshot");
        }
        service = next;
        consensus.appVersion(service.appVersion());
        sessions = new SessionIngress(consensus, transport, sessionTimeoutNs, egressBufferBytes / 2 - 64);
        sessions.authenticator(authenticator);
        sessions.limits(sessionLimits);
        if (null != sessionSecrets)
        {
            sessions.sessionSecrets(sessionSecrets);
        }
        if (null != bridge)
        {
            container = bridge.start(service, log, null == image ? log.startPosition() : image.logPosition(), image,
                sessions, maxSessions, egressBufferBytes, maxTimers, idleStrategy, settings.pauseClock());
            sessions.container(container);
            consensus.clientIngress(sessions);
            return;
        }
        container = new ServiceContainer(consensus.memberId(), service, log,
            null == image ? log.startPosition() : image.logPosition(), new SessionTable(maxSessions, egressBufferBytes),
            new TimerTable(maxTimers), sessions, idleStrategy);
        sessions.container(container);
        consensus.clientIngress(sessions);
        container.onSnapshotTaken(this::onSnapshotTaken, settings.pauseClock());
        container.imageSource(this::freeImage);
        if (null == image)
        {
            container.start(null);
        }
        else
        {
            container.startFrom(image);
        }
    }

    /**
     * @param authenticator decides on client connects and resumes while this member leads (default: accept all).
     * @return this.
     */
    public ServiceMember clientAuthenticator(final ClientAuthenticator authenticator)
    {
        this.authenticator = authenticator;
        sessions.authenticator(authenticator);
        return this;
    }

    /**
     * @param limits what one client may open while this member leads (default {@link SessionLimits#DEFAULTS}).
     * @return this.
     */
    public ServiceMember sessionLimits(final SessionLimits limits)
    {
        this.sessionLimits = limits;
        sessions.limits(limits);
        return this;
    }

    /**
     * @param limit sessions this member's memory holds: as leader it refuses opens beyond them (default: the table's
     *              size).
     * @return this.
     */
    public ServiceMember memorySessionLimit(final int limit)
    {
        sessions.memorySessionLimit(limit);
        return this;
    }

    /**
     * @param secrets where this member, as leader, draws session secrets: a seeded generator for a simulation
     *                (default: {@code SecureRandom}).
     * @return this.
     */
    public ServiceMember sessionSecrets(final RandomGenerator secrets)
    {
        this.sessionSecrets = secrets;
        sessions.sessionSecrets(secrets);
        return this;
    }

    public int doWork()
    {
        int work = consensus.doWork();
        final ClusterRole role = switch (consensus.role())
        {
            case LEADER -> ClusterRole.LEADER;
            case CANDIDATE -> ClusterRole.CANDIDATE;
            default -> ClusterRole.FOLLOWER;
        };
        if (null == bridge)
        {
            container.roleChanged(role);
            work += container.apply(consensus.commitPosition(), 1 << 20);
        }
        else
        {
            work += bridge.doWork(consensus.commitPosition(), role);
        }
        work += sessions.doWork();
        if (toolRequests > 0)
        {
            work += answerToolRequests(null == storage ? -1 : storage.durablePosition());
        }
        if (null != storage)
        {
            // Cheapest first: on the duty cycle of a member with no shutdown or tool pending, two comparisons.
            if ((container.shutdownPosition() >= 0 || (toolRequests > 0 && toolWaitsForSnapshot())) &&
                storage.isWriting())
            {
                storage.expedite(); // a tool or a shutdown waits for this snapshot: no stagger
            }
            work += snapshotDuties();
            checkShutdown();
        }
        if (null != bridge)
        {
            bridge.releaseImages();
        }
        work += transport.flush(consensus.nowNs());
        final MemberMetrics metrics = consensus.metrics();
        metrics.set(MemberMetrics.APPLIED_POSITION, container.appliedPosition());
        metrics.set(MemberMetrics.SESSIONS, container.sessionTable().size());
        metrics.set(MemberMetrics.SNAPSHOTS_TAKEN, snapshotsTaken);
        metrics.set(MemberMetrics.SNAPSHOT_POSITION, null == storage ? -1 : storage.durablePosition());
        metrics.set(MemberMetrics.SUSPENDED, container.isSuspended() ? 1 : 0);
        metrics.set(MemberMetrics.SNAPSHOT_PAUSE_NS, lastPauseNs);
        metrics.set(MemberMetrics.SNAPSHOT_BYTES, lastImageLength);
        return work;
    }

    private int snapshotDuties()
    {
        int work = 0;
        final String snapshotProblem = storage.writeProblem();
        if (snapshotProblem != reportedSnapshotProblem)
        {
            reportedSnapshotProblem = snapshotProblem;
            if (null != snapshotProblem)
            {
                consensus.errors().record("disk", snapshotProblem);
            }
        }
        if (null != pendingImage && !storage.isWriting())
        {
            // Snapshots are recorded in log order only: the newest recorded is the one a restart loads.
            if (pendingImage.logPosition() > storage.durablePosition())
            {
                writingImage = pendingImage;
                storage.write(pendingImage);
            }
            pendingImage = null;
            work++;
        }
        final long durable = storage.durablePosition();
        if (durable > retainedFor)
        {
            retainedFor = durable;
            final long oldestKept = storage.retain(settings.keep());
            consensus.compactLog(oldestKept);
            work++;
        }
        if (Role.LEADER != consensus.role())
        {
            requestedSnapshotAt = -1;
        }
        else if (settings.intervalBytes() > 0 && container.lastSnapshotPosition() >= requestedSnapshotAt &&
            consensus.logPosition() - Math.max(0, container.lastSnapshotPosition()) >= settings.intervalBytes())
        {
            requestedSnapshotAt = appendAction(ClusterAction.SNAPSHOT);
            work++;
        }
        return work;
    }

    /**
     * An orderly shutdown: once the snapshot this member took at the shutdown entry is durable (and any tool waiting
     * on it answered), a follower stops. The leader stops last, once no other member is connected (they stopped, so
     * they had learned the entry was committed) or after a bound of 5 s (a member that was down is not waited for),
     * so that no follower is left without the leader it needs to learn that commit.
     */
    private void checkShutdown()
    {
        final long shutdownAt = container.shutdownPosition();
        if (stopped || shutdownAt < 0 || storage.durablePosition() < shutdownAt || toolRequests > 0)
        {
            return;
        }
        if (Role.LEADER != consensus.role())
        {
            stopped = true;
        }
        else if (shutdownDeadlineNs < 0)
        {
            shutdownDeadlineNs = consensus.nowNs() + SHUTDOWN_LEADER_WAIT_NS;
        }
        else if (!consensus.anyPeerConnected() || consensus.nowNs() >= shutdownDeadlineNs)
        {
            stopped = true;
        }
        if (stopped)
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0} stops: orderly shutdown at position {1}, snapshot durable",
                consensus.memberId(), shutdownAt);
        }
    }

    /**
     * @return true once an orderly shutdown has finished on this member: its runner should stop it (exit 0).
     */
    public boolean isStopped()
    {
        return stopped;
    }

    private long appendAction(final ClusterAction action)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + actionEncoder
            .wrapAndApplyHeader(actionBuffer, 0, actionHeader)
            .timestamp(consensus.logTimeNs())
            .action(action)
            .encodedLength();
        return consensus.appendLogEntry(ClusterActionRequestEncoder.TEMPLATE_ID, actionBuffer, 0, length);
    }

    private boolean toolWaitsForSnapshot()
    {
        for (int i = 0; i < toolRequests; i++)
        {
            if (!toolWaitsForApply[i])
            {
                return true;
            }
        }
        return false;
    }

    private int answerToolRequests(final long durable)
    {
        int answered = 0;
        for (int i = toolRequests - 1; i >= 0; i--)
        {
            final long reached = toolWaitsForApply[i] ? container.appliedPosition() : durable;
            if (toolPositions[i] <= reached)
            {
                consensus.answerTool(toolEndpoints[i], toolCorrelationIds[i], true,
                    toolWaitsForApply[i] ? toolPositions[i] : durable);
            }
            else if (Role.LEADER != consensus.role())
            {
                consensus.answerTool(toolEndpoints[i], toolCorrelationIds[i], false, -1);
            }
            else
            {
                continue;
            }
            answered++;
            toolRequests--;
            toolEndpoints[i] = toolEndpoints[toolRequests];
            toolCorrelationIds[i] = toolCorrelationIds[toolRequests];
            toolPositions[i] = toolPositions[toolRequests];
            toolWaitsForApply[i] = toolWaitsForApply[toolRequests];
        }
        return answered;
    }

    private void onSnapshotTaken(final SnapshotImage image, final long pauseNs)
    {
        snapshotsTaken++;
        lastPauseNs = pauseNs;
        maxPauseNs = Math.max(maxPauseNs, pauseNs);
        lastImageLength = image.encodedLength();
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} took snapshot at {1}: {2} bytes, services paused {3} us",
            consensus.memberId(), image.logPosition(), image.encodedLength(), pauseNs / 1000);
        if (null == storage)
        {
            return;
        }
        if (storage.isWriting())
        {
            // One waits; a newer one replaces it (the older would be obsolete by the time it was written).
            pendingImage = image;
        }
        else
        {
            // A snapshot still waiting from before is older than this one: it must not be written after it.
            pendingImage = null;
            writingImage = image;
            storage.write(image);
        }
    }

    /**
     * DEDICATED: whether an image the service thread filled is still needed here (being written, or waiting to be).
     */
    private boolean imageInUse(final SnapshotImage image)
    {
        return image == pendingImage || (image == writingImage && null != storage && storage.isWriting());
    }

    /**
     * The image for the next snapshot: one storage is not writing. A waiting image is about to be replaced by this
     * snapshot anyway, so it may be reused.
     */
    private SnapshotImage freeImage(final long logPosition, final long term, final long timestamp, final int sizeHint)
    {
        if (null == storage)
        {
            return new SnapshotImage(logPosition, term, timestamp, sizeHint);
        }
        final SnapshotImage busy = storage.isWriting() ? writingImage : null;
        for (int i = 0; i < images.length; i++)
        {
            if (null != images[i] && images[i] != busy)
            {
                if (images[i] == pendingImage)
                {
                    pendingImage = null;
                }
                return images[i].reset(logPosition, term, timestamp);
            }
            if (null == images[i])
            {
                images[i] = new SnapshotImage(logPosition, term, timestamp, sizeHint);
                return images[i];
            }
        }
        throw new IllegalStateException("no free snapshot image");
    }

    // ------------------------------------------------------------------------------------------- ServiceHooks

    public long appliedPosition()
    {
        return container.appliedPosition();
    }

    /**
     * In DEDICATED mode the state is hashed where the service thread last stopped applying (at {@link
     * #hashedPosition()}), which may trail {@link #appliedPosition()} under load; they meet when the member is idle.
     */
    public long stateHash()
    {
        return null == bridge ? container.stateHash() * 31 + service.stateHash() : bridge.stateHash();
    }

    /**
     * @return the position {@link #stateHash()} is the state at (-1 before the first, in DEDICATED mode).
     */
    public long hashedPosition()
    {
        return null == bridge ? container.appliedPosition() : bridge.hashedPosition();
    }

    /**
     * @return the service thread's agent in DEDICATED mode, for the caller to run; null in SHARED mode.
     */
    public ServiceThreadAgent serviceAgent()
    {
        return null == bridge ? null : bridge.agent();
    }

    public void beforeSnapshotInstall()
    {
        if (null != bridge)
        {
            bridge.pause();
        }
    }

    public void onSnapshotRequest(final int endpoint, final long correlationId)
    {
        onToolRequest(endpoint, correlationId, ClusterAction.SNAPSHOT);
    }

    public void onSuspendRequest(final int endpoint, final long correlationId, final boolean suspend)
    {
        onToolRequest(endpoint, correlationId, suspend ? ClusterAction.SUSPEND : ClusterAction.RESUME);
    }

    public void onShutdownRequest(final int endpoint, final long correlationId)
    {
        onToolRequest(endpoint, correlationId, ClusterAction.SHUTDOWN);
    }

    /**
     * Append the action and answer the tool once this member's snapshot at or after it is durable.
     */
    private void onToolRequest(final int endpoint, final long correlationId, final ClusterAction action)
    {
        if (toolRequests >= MAX_TOOL_REQUESTS)
        {
            consensus.answerTool(endpoint, correlationId, false, -1);
            return;
        }
        final long position = appendAction(action);
        if (position < 0)
        {
            consensus.answerTool(endpoint, correlationId, false, -1);
            return;
        }
        toolEndpoints[toolRequests] = endpoint;
        toolCorrelationIds[toolRequests] = correlationId;
        toolPositions[toolRequests] = position;
        toolWaitsForApply[toolRequests] = ClusterAction.SUSPEND == action || ClusterAction.RESUME == action;
        toolRequests++;
    }

    public void onSnapshotInstalled(final SnapshotStorage.Loaded snapshot)
    {
        consensus.observeLogTime(snapshot.image().timestamp());
        if (null == bridge)
        {
            service.onTerminate(container);
        }
        else
        {
            bridge.terminateService();
        }
        pendingImage = null;
        retainedFor = -1;
        startContainer(snapshot.image());
        if (null != bridge)
        {
            bridge.resume(snapshot.image().logPosition());
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} restarted its service from the snapshot at {1}",
            consensus.memberId(), snapshot.image().logPosition());
    }

    // ---------------------------------------------------------------------------------------------- lifecycle

    public void onClose()
    {
        if (null != bridge)
        {
            // The service thread stops reading the log before it is closed; the service then stops here.
            bridge.pause();
            bridge.terminateService();
        }
        container.terminate();
        consensus.onClose();
        if (null != storage)
        {
            storage.close();
        }
    }

    public String roleName()
    {
        return "member-" + consensus.memberId();
    }

    public ConsensusAgent consensus()
    {
        return consensus;
    }

    public ServiceContainer container()
    {
        return container;
    }

    public ClusteredService service()
    {
        return service;
    }

    /**
     * @return snapshots this member has taken.
     */
    public long snapshotsTaken()
    {
        return snapshotsTaken;
    }

    /**
     * @return the services' pause while the last snapshot was taken, in nanoseconds.
     */
    public long lastSnapshotPauseNs()
    {
        return lastPauseNs;
    }

    public long maxSnapshotPauseNs()
    {
        return maxPauseNs;
    }

    public int lastSnapshotLength()
    {
        return lastImageLength;
    }
}
