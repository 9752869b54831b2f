package io.lockstep.consensus.service;

import io.lockstep.archive.BlockHandler;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.consensus.BlockSource;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.log.ClusterAction;
import io.lockstep.consensus.log.ClusterActionRequestDecoder;
import io.lockstep.consensus.log.MessageHeaderDecoder;
import io.lockstep.consensus.log.NewLeadershipTermDecoder;
import io.lockstep.consensus.log.ServiceMessageDecoder;
import io.lockstep.consensus.log.SessionCloseDecoder;
import io.lockstep.consensus.log.SessionMessageDecoder;
import io.lockstep.consensus.log.SessionOpenDecoder;
import io.lockstep.consensus.log.TimerEventDecoder;
import org.agrona.DirectBuffer;
import org.agrona.SemanticVersion;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;

import java.util.function.Consumer;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Runs a {@link ClusteredService} over committed log entries only. Every member runs one over the same log, so each
 * holds the same sessions, timers and service state at the same position, and produces the same egress. What leaves
 * the member (egress to clients, acknowledgements, requests to append) goes to an {@link Outbox}, which only the
 * leader acts on. A service that throws is not caught here: the error stops the member, because a replica that
 * skipped an entry could no longer be trusted to agree with the others.
 * <p>
 * Snapshots: a cluster-action SNAPSHOT entry makes every member serialise the container's state and the service's
 * into a {@link SnapshotImage} at the position after that entry: the same state at the same position everywhere.
 * Serialising is the only pause the service sees; the image goes to a {@link SnapshotTaken} listener, which writes
 * it out in the background.
 */
public final class ServiceContainer implements Cluster
{
    /**
     * What the container produces for the world outside the member. Called on every member; a follower's outbox
     * drops it all, the leader's sends it.
     */
    public interface Outbox
    {
        /** A session opened from a connect request this member (if leader) may have received; sessionId -1: the
         * table was full and the open was refused. */
        void onSessionOpened(long sessionId, long correlationId, int leaderEndpoint);

        /** Egress for a session's client. */
        void onEgress(long sessionId, long sequence, DirectBuffer buffer, int offset, int length);

        /** Every ingress sequence up to this one is applied (duplicates included). */
        void onIngressApplied(long sessionId, long appliedSequence);

        /** A session closed. */
        void onSessionClosed(long sessionId, CloseReason reason);

        /** The service asked to close a session: the leader appends a session-close entry. */
        void onCloseRequested(long sessionId);

        /**
         * The service scheduled a timer (whatever the table answered). Only a DEDICATED service thread's outbox needs
         * this and the two below: it records what the service did, for the consensus thread's copy of the tables.
         */
        default void onTimerScheduled(long correlationId, long deadline)
        {
        }

        /** The service cancelled a timer (whatever the table answered). */
        default void onTimerCancelled(long correlationId)
        {
        }

        /** The service offered a service message (whatever the queue answered). */
        default void onServiceMessageOffered(DirectBuffer buffer, int offset, int length)
        {
        }

        /** Drops everything: for replaying a log outside a cluster (checks, benchmarks). */
        Outbox DISCARD = new Outbox()
        {
            public void onSessionOpened(final long sessionId, final long correlationId, final int leaderEndpoint)
            {
            }

            public void onEgress(
                final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
                final int length)
            {
            }

            public void onIngressApplied(final long sessionId, final long appliedSequence)
            {
            }

            public void onSessionClosed(final long sessionId, final CloseReason reason)
            {
            }

            public void onCloseRequested(final long sessionId)
            {
            }
        };

    }

    /** Gives the image a snapshot is serialised into. */
    @FunctionalInterface
    public interface ImageSource
    {
        /**
         * @param sizeHint bytes the last snapshot took.
         * @return an empty image for the position, not in use elsewhere.
         */
        SnapshotImage image(long logPosition, long term, long timestamp, int sizeHint);
    }

    /** Receives each snapshot image as soon as it is taken. */
    @FunctionalInterface
    public interface SnapshotTaken
    {
        void onSnapshotTaken(SnapshotImage image, long pauseNs);
    }

    private final class Session implements ClientSession
    {
        private final SessionTable.Session state;
        private boolean closed;

        Session(final SessionTable.Session state)
        {
            this.state = state;
        }

        public long id()
        {
            return state.id();
        }

        public String principal()
        {
            return state.principal();
        }

        public long offer(final DirectBuffer buffer, final int offset, final int length)
        {
            if (closed)
            {
                return CLOSED;
            }
            final long sequence = state.egress().append(buffer, offset, length);
            if (sequence < 0)
            {
                return TOO_LONG;
            }
            outbox.onEgress(state.id(), sequence, buffer, offset, length);
            return sequence;
        }

        public boolean isClosed()
        {
            return closed;
        }
    }

    private final int memberId;
    private final ClusteredService service;
    /** The service overrides the callbacks that timers and service messages arrive through (they have defaults). */
    private final boolean hearsTimers;
    private final boolean hearsServiceMessages;
    private final BlockSource log;
    private final SessionTable sessions;
    private final TimerTable timers;
    private final ServiceMessageQueue serviceMessages = new ServiceMessageQueue(1024);
    private final Outbox outbox;
    private final IdleStrategy idleStrategy;
    private final Long2ObjectHashMap<Session> clientSessions =
        new Long2ObjectHashMap<>();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final SessionOpenDecoder sessionOpen = new SessionOpenDecoder();
    private final NewLeadershipTermDecoder newTerm =
        new NewLeadershipTermDecoder();
    private final SessionMessageDecoder sessionMessage = new SessionMessageDecoder();
    private final SessionCloseDecoder sessionClose = new SessionCloseDecoder();
    private final TimerEventDecoder timerEvent = new TimerEventDecoder();
    private final ServiceMessageDecoder serviceMessage = new ServiceMessageDecoder();
    private final BlockHandler blockHandler = this::onBlock;
    private final ClusterActionRequestDecoder clusterAction = new ClusterActionRequestDecoder();
    private long shutdownPosition = -1;
    private final ContainerSnapshot containerSnapshot = new ContainerSnapshot();
    private boolean suspended;
    private NanoClock pauseClock = () -> 0;
    private SnapshotTaken snapshotTaken;
    private ImageSource imageSource = (position, term, timestamp, sizeHint) ->
        new SnapshotImage(position, term, timestamp, sizeHint);
    private long lastSnapshotPosition = -1;
    private boolean serialisesSnapshots = true;
    private boolean stopAfterSnapshot;
    private long snapshotsTaken;
    private int lastImageLength = 64 * 1024;
    private long entryTerm;
    private ClusterRole role = ClusterRole.FOLLOWER;
    private long appliedPosition;
    private long entryTimestamp;
    private long entryEndPosition;

    /**
     * @param memberId       this member.
     * @param service        the user's service.
     * @param log            the member's log, read up to the commit position only.
     * @param startPosition  where applying starts (after a snapshot, its position; else the log's start).
     * @param sessions       the replicated session table (from a snapshot, or empty).
     * @param timers         the replicated timer table (from a snapshot, or empty).
     * @param outbox         where egress and append requests go.
     * @param idleStrategy   handed to the service for its own waits.
     */
    public ServiceContainer(
        final int memberId,
        final ClusteredService service,
        final BlockSource log,
        final long startPosition,
        final SessionTable sessions,
        final TimerTable timers,
        final Outbox outbox,
        final IdleStrategy idleStrategy)
    {
        this.memberId = memberId;
        this.service = service;
        this.hearsTimers = overrides(service, "onTimerEvent", long.class, long.class);
        this.hearsServiceMessages = overrides(service, "onServiceMessage", long.class, DirectBuffer.class, int.class,
            int.class);
        this.log = log;
        this.appliedPosition = startPosition;
        this.entryEndPosition = startPosition;
        this.sessions = sessions;
        this.timers = timers;
        this.outbox = outbox;
        this.idleStrategy = idleStrategy;
        for (final SessionTable.Session s : sessions.sessions())
        {
            clientSessions.put(s.id(), new Session(s));
        }
    }

    /**
     * Start the service.
     *
     * @param snapshot its snapshot, or null.
     */
    public void start(final SnapshotReader snapshot)
    {
        service.onStart(this, snapshot);
    }

    /**
     * Start from a snapshot: restore the container's state from the image's front, then start the service with a
     * reader over the rest. Applying continues after the snapshot's position.
     */
    public void startFrom(final SnapshotImage image)
    {
        if (appliedPosition > image.logPosition() || !sessions.sessions().isEmpty())
        {
            throw new IllegalStateException("a snapshot is loaded into a fresh container only");
        }
        final SnapshotImage.Reader reader = image.reader();
        suspended = containerSnapshot.read(reader, sessions, timers, serviceMessages);
        clientSessions.clear();
        for (final SessionTable.Session s : sessions.sessions())
        {
            clientSessions.put(s.id(), new Session(s));
        }
        appliedPosition = image.logPosition();
        entryEndPosition = image.logPosition();
        entryTimestamp = image.timestamp();
        lastSnapshotPosition = image.logPosition();
        lastImageLength = image.encodedLength() + 64 * 1024;
        service.onStart(this, reader);
    }

    /**
     * @param listener receives every snapshot this container takes.
     * @param clock    measures the pause taking it costs (reported, never part of the state).
     */
    public void onSnapshotTaken(final SnapshotTaken listener, final NanoClock clock)
    {
        this.snapshotTaken = listener;
        this.pauseClock = clock;
    }

    /**
     * @param source gives the images snapshots are serialised into (default: a new one each time).
     */
    public void imageSource(final ImageSource source)
    {
        this.imageSource = source;
    }

    /**
     * The consensus thread's copy of a DEDICATED member's container takes no snapshots of its own (the service
     * thread's container does): at a snapshot entry it only notes the position.
     */
    void serialisesSnapshots(final boolean serialises)
    {
        this.serialisesSnapshots = serialises;
    }

    /**
     * A DEDICATED service thread's container ends an {@link #apply} call at each snapshot it takes, so that at most
     * one image is in flight to the consensus thread per call.
     */
    void stopAfterSnapshot(final boolean stop)
    {
        this.stopAfterSnapshot = stop;
    }

    /**
     * @return position of the last snapshot taken or loaded (replicated: the same on every member), or -1.
     */
    public long lastSnapshotPosition()
    {
        return lastSnapshotPosition;
    }

    /**
     * Apply committed entries.
     *
     * @param commitPosition apply nothing beyond it.
     * @param maxBytes       bound on log bytes applied in this call.
     * @return log bytes applied.
     */
    public int apply(final long commitPosition, final int maxBytes)
    {
        if (appliedPosition >= commitPosition)
        {
            return 0;
        }
        return log.readBlock(appliedPosition, commitPosition, maxBytes, blockHandler);
    }

    /**
     * Tell the service about a role change.
     */
    public void roleChanged(final ClusterRole newRole)
    {
        if (newRole != role)
        {
            role = newRole;
            service.onRoleChange(newRole);
        }
    }

    /**
     * Stop the service.
     */
    public void terminate()
    {
        service.onTerminate(this);
    }

    /**
     * @return the term of the last term-opening entry applied (0 before any since start): once it is the leader's
     * current term, every entry committed before the term is applied here.
     */
    public long appliedLeadershipTerm()
    {
        return appliedLeadershipTerm;
    }

    public long appliedPosition()
    {
        return appliedPosition;
    }

    public SessionTable sessionTable()
    {
        return sessions;
    }

    /**
     * @return the position of the shutdown entry applied (the member stops once its snapshot there is durable),
     * or -1 if none has been.
     */
    public long shutdownPosition()
    {
        return shutdownPosition;
    }

    public TimerTable timerTable()
    {
        return timers;
    }

    public ServiceMessageQueue serviceMessages()
    {
        return serviceMessages;
    }

    /**
     * @return a hash of the container's replicated state (sessions and timers; the service hashes its own).
     */
    public long stateHash()
    {
        return ((sessions.stateHash() * 31 + timers.stateHash()) * 31 + serviceMessages.stateHash()) * 31 +
            (suspended ? 1 : 0);
    }

    /**
     * @return true between an applied SUSPEND entry and the next RESUME: the leader appends no client messages,
     * timer firings or service messages meanwhile (replicated, so a new leader keeps holding them).
     */
    public boolean isSuspended()
    {
        return suspended;
    }

    // ---------------------------------------------------------------------------------------------- Cluster

    public int memberId()
    {
        return memberId;
    }

    public ClusterRole role()
    {
        return role;
    }

    public long time()
    {
        return entryTimestamp;
    }

    public long logPosition()
    {
        return entryEndPosition;
    }

    public boolean scheduleTimer(final long correlationId, final long deadline)
    {
        if (!hearsTimers)
        {
            // The same on every member: each stops at the same entry, rather than every timer vanishing in silence.
            throw new IllegalStateException(service.getClass().getName() + " schedules a timer but does not " +
                "override onTimerEvent, where it would fire");
        }
        final boolean scheduled = timers.schedule(correlationId, deadline);
        outbox.onTimerScheduled(correlationId, deadline);
        return scheduled;
    }

    public boolean cancelTimer(final long correlationId)
    {
        final boolean cancelled = timers.cancel(correlationId);
        outbox.onTimerCancelled(correlationId);
        return cancelled;
    }

    public ClientSession getClientSession(final long sessionId)
    {
        return clientSessions.get(sessionId);
    }

    public void forEachClientSession(final Consumer<ClientSession> action)
    {
        for (final SessionTable.Session s : sessions.sessions())
        {
            action.accept(clientSessions.get(s.id()));
        }
    }

    public boolean closeClientSession(final long sessionId)
    {
        if (null == sessions.get(sessionId))
        {
            return false;
        }
        outbox.onCloseRequested(sessionId);
        return true;
    }

    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        if (!hearsServiceMessages)
        {
            throw new IllegalStateException(service.getClass().getName() + " offers a service message but does not " +
                "override onServiceMessage, where it would arrive");
        }
        final long id = serviceMessages.offer(buffer, offset, length);
        outbox.onServiceMessageOffered(buffer, offset, length);
        return id < 0 ? Cluster.BACK_PRESSURED : id;
    }

    public IdleStrategy idleStrategy()
    {
        return idleStrategy;
    }

    // ---------------------------------------------------------------------------------------------- applying

    private void onBlock(
        final DirectBuffer buffer, final int offset, final int length, final long startPosition, final long endPosition)
    {
        long position = startPosition;
        for (int o = offset; o < offset + length; )
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final int type = buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            if (PADDING_FRAME_TYPE == type)
            {
                position += frameLength;
                o += HEADER_LENGTH;
                continue;
            }
            final int aligned = FrameDescriptor.alignedLength(frameLength);
            entryEndPosition = position + aligned;
            entryTerm = buffer.getLong(o + FrameDescriptor.TERM_OFFSET, LITTLE_ENDIAN);
            final long snapshotsBefore = snapshotsTaken;
            applyEntry(type, buffer, o + HEADER_LENGTH, frameLength - HEADER_LENGTH);
            position += aligned;
            o += aligned;
            appliedPosition = position;
            if (stopAfterSnapshot && snapshotsTaken != snapshotsBefore)
            {
                // The image must reach the consensus thread before another can be taken: end this apply here.
                return;
            }
        }
        appliedPosition = endPosition;
    }

    private void applyEntry(final int type, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return;
        }
        header.wrap(buffer, offset);
        if (header.schemaId() == MessageHeaderDecoder.SCHEMA_ID
            && header.version() > MessageHeaderDecoder.SCHEMA_VERSION)
        {
            throw new IllegalStateException("member " + memberId + ": the log entry ending at " + entryEndPosition +
                " is in log format version " + header.version() + ", written by a newer Lockstep; this member reads " +
                "up to version " + MessageHeaderDecoder.SCHEMA_VERSION + ": upgrade it");
        }
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID || header.templateId() != type)
        {
            // Entries of the consensus module itself (new term, driver appends): nothing for the service.
            return;
        }
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        switch (type)
        {
            case SessionOpenDecoder.TEMPLATE_ID -> onSessionOpen(buffer, body);
            case SessionMessageDecoder.TEMPLATE_ID -> onSessionMessage(buffer, body);
            case SessionCloseDecoder.TEMPLATE_ID -> onSessionClose(buffer, body);
            case TimerEventDecoder.TEMPLATE_ID -> onTimerEvent(buffer, body);
            case ServiceMessageDecoder.TEMPLATE_ID -> onServiceMessage(buffer, body);
            case ClusterActionRequestDecoder.TEMPLATE_ID -> onClusterAction(buffer, body);
            case NewLeadershipTermDecoder.TEMPLATE_ID -> checkAppVersion(buffer, body);
            default ->
            {
                // A newer entry type this container does not know: nothing for the service.
            }
        }
    }

    /**
     * A term's entries were written by its leader's service version: one of another major version cannot be
     * applied here. Stopping (with both versions named) is the only safe answer: applying them might compute another
     * state than the members that can.
     */
    /** Session ids of membership epoch e start at e << this (a trillion sessions per epoch). */
    static final int SESSION_EPOCH_SHIFT = 40;
    private long appliedLeadershipTerm;

    private void checkAppVersion(final DirectBuffer buffer, final int body)
    {
        newTerm.wrap(buffer, body, header.blockLength(), header.version());
        appliedLeadershipTerm = newTerm.term();
        final long epoch = newTerm.configEpoch();
        if (epoch > 0 && epoch != NewLeadershipTermDecoder.configEpochNullValue())
        {
            // A promoted configuration numbers its sessions apart from every earlier one: a session the old primary
            // opened after the standby's last entry must read as closed to its client, never as someone else's.
            sessions.raiseNextSessionId(epoch << SESSION_EPOCH_SHIFT);
        }
        final int written = newTerm.appVersion();
        final int mine = service.appVersion();
        if (written > 0 && SemanticVersion.major(written) != SemanticVersion.major(mine))
        {
            throw new IllegalStateException("member " + memberId + ": the entries of term " + newTerm.term() +
                " (from position " + entryEndPosition + ", leader " + newTerm.leaderId() + ") were written by " +
                "application version " + SemanticVersion.toString(written) + "; this member runs " +
                SemanticVersion.toString(mine) + ", another major version, and cannot apply them (see " +
                "docs/how-to/upgrades.md)");
        }
    }

    private void onSessionOpen(final DirectBuffer buffer, final int body)
    {
        sessionOpen.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = sessionOpen.timestamp();
        final long correlationId = sessionOpen.correlationId();
        final int leaderEndpoint = sessionOpen.leaderEndpoint();
        final SessionSecret secret = sessionOpen.actingVersion() >= SessionOpenDecoder.secretHighSinceVersion() ?
            new SessionSecret(sessionOpen.secretHigh(), sessionOpen.secretLow(), true) : SessionSecret.NONE;
        final SessionTable.Session state = sessions.open(sessionOpen.principal(), secret);
        if (null == state)
        {
            // Full: the id is used up on every member alike, and the leader that appended it answers its client.
            outbox.onSessionOpened(-1, correlationId, leaderEndpoint);
            return;
        }
        final Session session = new Session(state);
        clientSessions.put(state.id(), session);
        service.onSessionOpen(session, entryTimestamp);
        outbox.onSessionOpened(state.id(), correlationId, leaderEndpoint);
    }

    private void onSessionMessage(final DirectBuffer buffer, final int body)
    {
        sessionMessage.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = sessionMessage.timestamp();
        final long sessionId = sessionMessage.sessionId();
        final long sequence = sessionMessage.sequence();
        switch (sessions.onMessage(sessionId, sequence))
        {
            case APPLY ->
            {
                final int payloadLength = sessionMessage.payloadLength();
                final int payloadOffset = sessionMessage.limit() + SessionMessageDecoder.payloadHeaderLength();
                service.onSessionMessage(clientSessions.get(sessionId), entryTimestamp, buffer, payloadOffset,
                    payloadLength);
                outbox.onIngressApplied(sessionId, sequence);
            }
            case DUPLICATE -> outbox.onIngressApplied(sessionId, sessions.get(sessionId).appliedSequence());
            default ->
            {
                // Out of order or unknown session: not applied; the client resends what is not acknowledged.
            }
        }
    }

    private void onSessionClose(final DirectBuffer buffer, final int body)
    {
        sessionClose.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = sessionClose.timestamp();
        final long sessionId = sessionClose.sessionId();
        if (null == sessions.close(sessionId))
        {
            return;
        }
        final Session session = clientSessions.remove(sessionId);
        session.closed = true;
        final CloseReason reason = switch (sessionClose.reason())
        {
            case CLIENT_ACTION -> CloseReason.CLIENT_ACTION;
            case SERVICE_ACTION -> CloseReason.SERVICE_ACTION;
            case TIMEOUT -> CloseReason.TIMEOUT;
            default -> CloseReason.ERROR;
        };
        service.onSessionClose(session, entryTimestamp, reason);
        outbox.onSessionClosed(sessionId, reason);
    }

    private void onTimerEvent(final DirectBuffer buffer, final int body)
    {
        timerEvent.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = timerEvent.timestamp();
        if (timers.fire(timerEvent.correlationId(), timerEvent.deadline()))
        {
            service.onTimerEvent(timerEvent.correlationId(), entryTimestamp);
        }
    }

    private void onClusterAction(final DirectBuffer buffer, final int body)
    {
        clusterAction.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = clusterAction.timestamp();
        if (ClusterAction.SNAPSHOT == clusterAction.action())
        {
            takeSnapshot();
        }
        else if (ClusterAction.SUSPEND == clusterAction.action() || ClusterAction.RESUME == clusterAction.action())
        {
            suspended = ClusterAction.SUSPEND == clusterAction.action();
        }
        else if (ClusterAction.SHUTDOWN == clusterAction.action())
        {
            // Every member snapshots here, so that the restart after the shutdown loads this state.
            takeSnapshot();
            shutdownPosition = entryEndPosition;
        }
    }

    private void takeSnapshot()
    {
        if (!serialisesSnapshots)
        {
            lastSnapshotPosition = entryEndPosition;
            return;
        }
        final long startNs = pauseClock.nanoTime();
        final SnapshotImage image = imageSource.image(entryEndPosition, entryTerm, entryTimestamp, lastImageLength);
        containerSnapshot.write(image, sessions, timers, serviceMessages, suspended);
        service.onTakeSnapshot(image);
        lastImageLength = image.encodedLength() + 64 * 1024;
        lastSnapshotPosition = entryEndPosition;
        snapshotsTaken++;
        if (null != snapshotTaken)
        {
            snapshotTaken.onSnapshotTaken(image, pauseClock.nanoTime() - startNs);
        }
    }

    private void onServiceMessage(final DirectBuffer buffer, final int body)
    {
        serviceMessage.wrap(buffer, body, header.blockLength(), header.version());
        entryTimestamp = serviceMessage.timestamp();
        if (!serviceMessages.apply(serviceMessage.messageId()))
        {
            return;
        }
        final int payloadLength = serviceMessage.payloadLength();
        final int payloadOffset = serviceMessage.limit() + ServiceMessageDecoder.payloadHeaderLength();
        service.onServiceMessage(entryTimestamp, buffer, payloadOffset, payloadLength);
    }

    /**
     * @return true if the service's class declares the callback itself (or a superclass other than the default does).
     */
    private static boolean overrides(final ClusteredService service, final String name, final Class<?>... parameters)
    {
        try
        {
            return ClusteredService.class != service.getClass().getMethod(name, parameters).getDeclaringClass();
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalStateException("ClusteredService." + name + " not found", ex);
        }
    }
}
