package io.lockstep.consensus.service;

import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.codecs.EgressEncoder;
import io.lockstep.cluster.codecs.IngressAckEncoder;
import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.codecs.KeepAliveDecoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionCloseRequestDecoder;
import io.lockstep.cluster.codecs.SessionConnectDecoder;
import io.lockstep.cluster.codecs.SessionEventCode;
import io.lockstep.cluster.codecs.SessionEventEncoder;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ClientIngress;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.log.ServiceMessageEncoder;
import io.lockstep.consensus.log.SessionCloseEncoder;
import io.lockstep.consensus.log.SessionMessageEncoder;
import io.lockstep.consensus.log.SessionOpenEncoder;
import io.lockstep.consensus.log.TimerEventEncoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.security.SecureRandom;
import java.util.HashSet;
import java.util.random.RandomGenerator;

/**
 * Client sessions on a member. On the leader it turns client messages into log entries (session open, message,
 * close), fires due timers and times out silent sessions by appending entries, and, as the container's
 * {@link ServiceContainer.Outbox}, sends the egress, acknowledgements and session events the applied entries
 * produce. On a follower it redirects clients to the leader and drops the outbox's output: followers compute the
 * same egress into their buffers, which is what lets a new leader resend it to a resuming client.
 * <p>
 * Which endpoint serves which session, and when each was last heard from, is leader-local state: a new leader
 * learns endpoints as clients resume, and gives every session a full timeout from its first duty cycle as leader.
 */
public final class SessionIngress implements ClientIngress, ServiceContainer.Outbox
{
    private final ConsensusAgent consensus;
    private final Transport transport;
    private final long sessionTimeoutNs;
    private final int maxIngressLength;
    /** Longest credentials a client may send. */
    private static final int MAX_CREDENTIALS_LENGTH = 4096;
    private ClientAuthenticator authenticator = ClientAuthenticator.ACCEPT_ALL;
    private SessionLimits limits = SessionLimits.DEFAULTS;
    private int memorySessionLimit = Integer.MAX_VALUE;
    /** Opens and resumes asked for per connection in the current one-second window: endpoint to {start, count}. */
    private final Int2ObjectHashMap<long[]> openWindows = new Int2ObjectHashMap<>();
    /** Where session secrets come from: a cryptographically strong generator unless a simulation seeds one. */
    private RandomGenerator secrets = new SecureRandom();
    private ServiceContainer container;
    private final Long2LongHashMap endpointBySession = new Long2LongHashMap(-1);
    private final Long2LongHashMap lastHeardNs = new Long2LongHashMap(-1);
    private final Long2LongHashMap closing = new Long2LongHashMap(-1);
    private final Long2LongHashMap firing = new Long2LongHashMap(Long.MIN_VALUE);
    /** Opens this leader appended, by endpoint and correlation id. Endpoint ids are member-local, so an open appended
     * by an earlier leader must not be answered to whichever local client happens to have that id. */
    private final HashSet<PendingOpen> pendingOpens = new HashSet<>();
    /** Sessions bound to each connection, and opens it has pending: what the per-connection bound counts. */
    private final Int2IntHashMap sessionsByEndpoint = new Int2IntHashMap(0);
    /** Egress and events out: sized in the constructor for the longest egress a session's buffer accepts. */
    private final UnsafeBuffer out;
    /** Log entries appended: sized in the constructor for the longest ingress accepted. */
    private final UnsafeBuffer entry;
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final io.lockstep.consensus.log.MessageHeaderEncoder entryHeader =
        new io.lockstep.consensus.log.MessageHeaderEncoder();
    private final SessionConnectDecoder connect = new SessionConnectDecoder();
    private final IngressDecoder ingress = new IngressDecoder();
    private final KeepAliveDecoder keepAlive = new KeepAliveDecoder();
    private final SessionCloseRequestDecoder closeRequest = new SessionCloseRequestDecoder();
    private final SessionEventEncoder sessionEvent = new SessionEventEncoder();
    private final IngressAckEncoder ingressAck = new IngressAckEncoder();
    private final EgressEncoder egress = new EgressEncoder();
    private final SessionOpenEncoder sessionOpen = new SessionOpenEncoder();
    private final SessionMessageEncoder sessionMessage = new SessionMessageEncoder();
    private final SessionCloseEncoder sessionClose = new SessionCloseEncoder();
    private final TimerEventEncoder timerEvent = new TimerEventEncoder();
    private final ServiceMessageEncoder serviceMessage = new ServiceMessageEncoder();
    private final TimerTable.DueTimerHandler fireTimer = this::fireTimer;
    private boolean wasLeader;
    /** Service messages with ids below this are appended in this term (leader-local; a new leader starts over). */
    private long serviceAppendedUpTo;
    private final ServiceMessageQueue.MessageVisitor appendServiceMessage = this::appendServiceMessage;

    /**
     * @param consensus        this member's consensus agent (role, leader, appends, clock).
     * @param transport        to clients.
     * @param sessionTimeoutNs a session silent this long (no message, no keepalive) is closed by the leader. Silence
     *                         is measured on the leader's monotonic clock, not in log time: a wall-clock step must
     *                         not close every session at once. The decision is a log entry (a TIMEOUT close), so
     *                         every member applies it at the same position all the same.
     * @param maxIngressLength longer client messages close the session with an error.
     */
    public SessionIngress(
        final ConsensusAgent consensus, final Transport transport, final long sessionTimeoutNs,
            final int maxIngressLength)
    {
        this.consensus = consensus;
        this.transport = transport;
        this.sessionTimeoutNs = sessionTimeoutNs;
        this.maxIngressLength = maxIngressLength;
        // An egress message may be as long as half a session's egress buffer, which is what maxIngressLength is cut
        // from; headers, fields and a session event's detail fit in the 2 KiB over it.
        final int longest = Math.max(64 * 1024, maxIngressLength + 128);
        this.out = new UnsafeBuffer(new byte[longest + 2048]);
        this.entry = new UnsafeBuffer(new byte[longest + 2048]);
    }

    /**
     * @param authenticator decides on each connect and resume (default: accept all).
     */
    public void authenticator(final ClientAuthenticator authenticator)
    {
        this.authenticator = authenticator;
    }

    /**
     * @param secrets where the leader draws each session's secret: {@code SecureRandom} on a member (the default);
     *                a seeded generator in a simulation, so that a seed replays exactly.
     */
    public void sessionSecrets(final RandomGenerator secrets)
    {
        this.secrets = secrets;
    }

    /**
     * @param limits what one client may open (default {@link SessionLimits#DEFAULTS}).
     */
    public void limits(final SessionLimits limits)
    {
        this.limits = limits;
    }

    /**
     * @param limit sessions this member's memory holds with full egress buffers: as leader it refuses opens beyond
     *              them, and no client can make it run out of heap (a leader-local bound, not replicated state: the
     *              session table's size is).
     */
    public void memorySessionLimit(final int limit)
    {
        this.memorySessionLimit = limit;
    }

    /**
     * @param container the container whose replicated tables this reads (set once, before the first duty cycle).
     */
    public void container(final ServiceContainer container)
    {
        this.container = container;
    }

    /**
     * Leader duties: fire due timers, close silent sessions. Call once per duty cycle after the container applied.
     *
     * @return work done.
     */
    public int doWork()
    {
        final boolean leader = syncRole();
        if (!leader)
        {
            return 0;
        }
        final int before = firing.size() + closing.size();
        final long appendedBefore = serviceAppendedUpTo;
        // Whatever the service offered and no entry carries yet in this term, oldest first; a duplicate of an entry
        // an earlier leader appended is ignored when applied.
        serviceAppendedUpTo = Math.max(serviceAppendedUpTo, container.serviceMessages().headId());
        if (!container.isSuspended())
        {
            // Suspended: held, not dropped; they go out once RESUME is applied (a timer fires late, once).
            container.serviceMessages().forEachFrom(serviceAppendedUpTo, appendServiceMessage);
            container.timerTable().forEachDue(consensus.logTimeNs(), fireTimer);
        }
        // Indexed, not iterated: this runs every duty cycle and must not allocate.
        final SessionTable table = container.sessionTable();
        for (int i = 0, size = table.size(); i < size; i++)
        {
            final SessionTable.Session s = table.sessionAt(i);
            final long heard = lastHeardNs.get(s.id());
            if (heard < 0)
            {
                lastHeardNs.put(s.id(), consensus.nowNs());
            }
            else if (consensus.nowNs() - heard > sessionTimeoutNs && closing.get(s.id()) < 0)
            {
                appendClose(s.id(), io.lockstep.consensus.log.CloseReason.TIMEOUT);
            }
        }
        return firing.size() + closing.size() - before + (int)(serviceAppendedUpTo - appendedBefore);
    }

    private boolean appendServiceMessage(final long id, final byte[] payload)
    {
        final int length = serviceMessage.wrapAndApplyHeader(entry, 0, entryHeader)
            .timestamp(consensus.logTimeNs()).messageId(id).putPayload(payload, 0, payload.length).encodedLength();
        if (append(ServiceMessageEncoder.TEMPLATE_ID, length) < 0)
        {
            return false;
        }
        serviceAppendedUpTo = id + 1;
        return true;
    }

    /**
     * Start or stop leader duties when the role changed. Called before anything else this layer does in a duty
     * cycle: a client can connect in the very cycle its member became leader (consensus runs first), and what that
     * connect set up must not be cleared afterwards.
     *
     * @return true if leader.
     */
    private boolean syncRole()
    {
        final boolean leader = Role.LEADER == consensus.role();
        if (leader != wasLeader)
        {
            wasLeader = leader;
            endpointBySession.clear();
            pendingOpens.clear();
            sessionsByEndpoint.clear();
            closing.clear();
            firing.clear();
            lastHeardNs.clear();
            serviceAppendedUpTo = 0;
            if (leader)
            {
                for (final SessionTable.Session s : container.sessionTable().sessions())
                {
                    lastHeardNs.put(s.id(), consensus.nowNs());
                }
            }
        }
        return leader;
    }

    // ------------------------------------------------------------------------------------------ client messages

    public void onClientMessage(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        header.wrap(buffer, offset);
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        if (!syncRole())
        {
            if (header.templateId() == SessionConnectDecoder.TEMPLATE_ID)
            {
                connect.wrap(buffer, body, header.blockLength(), header.version());
                sendEvent(endpoint, connect.correlationId(), connect.resumeSessionId(), SessionEventCode.REDIRECT, -1);
            }
            else
            {
                sendEvent(endpoint, -1, -1, SessionEventCode.REDIRECT, -1);
            }
            return;
        }
        switch (header.templateId())
        {
            case SessionConnectDecoder.TEMPLATE_ID -> onConnect(endpoint, buffer, body, offset + length);
            case IngressDecoder.TEMPLATE_ID -> onIngress(endpoint, buffer, body, offset + length);
            case KeepAliveDecoder.TEMPLATE_ID ->
            {
                keepAlive.wrap(buffer, body, header.blockLength(), header.version());
                if (!boundTo(keepAlive.sessionId(), endpoint))
                {
                    return;
                }
                heard(keepAlive.sessionId(), endpoint);
                // Answered, so a client can tell a live leader from a silent one.
                final SessionTable.Session session = container.sessionTable().get(keepAlive.sessionId());
                if (null != session)
                {
                    onIngressApplied(session.id(), session.appliedSequence());
                }
                else if (container.sessionTable().wasClosed(keepAlive.sessionId()))
                {
                    sendEvent(endpoint, -1, keepAlive.sessionId(), SessionEventCode.CLOSED, -1);
                }
            }
            case SessionCloseRequestDecoder.TEMPLATE_ID ->
            {
                closeRequest.wrap(buffer, body, header.blockLength(), header.version());
                if (boundTo(closeRequest.sessionId(), endpoint) &&
                    null != container.sessionTable().get(closeRequest.sessionId()))
                {
                    appendClose(closeRequest.sessionId(), io.lockstep.consensus.log.CloseReason.CLIENT_ACTION);
                }
            }
            default ->
            {
                // Messages a member never receives (events, egress): ignored.
            }
        }
    }

    // Longer than the method bound: the checks a session open meets, in order: a reviewer reads the whole gate at once.
    @SuppressWarnings("checkstyle:MethodLength")
    private void onConnect(final int endpoint, final DirectBuffer buffer, final int body, final int end)
    {
        connect.wrap(buffer, body, header.blockLength(), header.version());
        final int credentialsLength = connect.credentialsLength();
        if (credentialsLength < 0 || credentialsLength > MAX_CREDENTIALS_LENGTH ||
            connect.limit() + SessionConnectDecoder.credentialsHeaderLength() + credentialsLength > end)
        {
            rejectConnect(endpoint, connect.correlationId(), connect.resumeSessionId(), "malformed credentials");
            return;
        }
        final long correlationId = connect.correlationId();
        final long resume = connect.resumeSessionId();
        final long lastEgress = connect.lastEgressSequence();
        final long presentedHigh = connect.sessionSecretHigh();
        final long presentedLow = connect.sessionSecretLow();
        final byte[] credentials = new byte[connect.credentialsLength()];
        connect.getCredentials(credentials, 0, credentials.length);
        final ClientAuthenticator.Decision decision = authenticate(credentials);
        if (!decision.accepted())
        {
            rejectConnect(endpoint, correlationId, resume, decision.rejection());
            return;
        }
        if (resume < 0)
        {
            final String refusal = openRefusal(endpoint, decision.principal());
            if (null != refusal)
            {
                consensus.metrics().increment(MemberMetrics.SESSION_OPENS_REFUSED);
                consensus.errors().record("session-open", "refused a session open: " + refusal);
                sendEvent(endpoint, correlationId, -1, SessionEventCode.REFUSED, -1, refusal, SessionSecret.NONE);
                return;
            }
            final SessionSecret secret = SessionSecret.next(secrets);
            final int length = sessionOpen.wrapAndApplyHeader(entry, 0, entryHeader)
                .timestamp(consensus.logTimeNs()).correlationId(correlationId).leaderEndpoint(endpoint)
                .secretHigh(secret.high()).secretLow(secret.low())
                .principal(decision.principal()).encodedLength();
            if (append(SessionOpenEncoder.TEMPLATE_ID, length) > 0)
            {
                if (pendingOpens.add(new PendingOpen(endpoint, correlationId)))
                {
                    countOnEndpoint(endpoint, 1);
                }
            }
            return;
        }
        if (container.appliedLeadershipTerm() != consensus.term())
        {
            // A new leader that has not applied its own term's first entry may not yet have applied every message a
            // client was acknowledged for: its applied sequence would read as a loss. The client asks again soon.
            sendEvent(endpoint, correlationId, resume, SessionEventCode.REDIRECT, -1);
            return;
        }
        final SessionTable.Session session = container.sessionTable().get(resume);
        if (null == session && !container.sessionTable().wasClosed(resume))
        {
            // Not applied yet (a new leader catching up): ask the client to try again soon, without counting it.
            sendEvent(endpoint, correlationId, resume, SessionEventCode.REDIRECT, -1);
            return;
        }
        if (!withinConnectRate(endpoint))
        {
            // Each resume may resend a session's whole egress buffer: bounded like opens, and so is asking after a
            // closed one. Only a client asked to try again soon (above) does not use up its rate doing so.
            consensus.metrics().increment(MemberMetrics.SESSION_OPENS_REFUSED);
            sendEvent(endpoint, correlationId, resume, SessionEventCode.REFUSED, -1, "more than " +
                limits.opensPerSecondPerConnection() + " opens and resumes a second on this connection " +
                "(lockstep.client.session.opens.per.second)", SessionSecret.NONE);
            return;
        }
        if (null == session)
        {
            sendEvent(endpoint, correlationId, resume, SessionEventCode.CLOSED, -1); // closed for certain
            return;
        }
        if (!session.secret().matches(presentedHigh, presentedLow))
        {
            // Under any authenticator, accept-all included: knowing (or guessing) a session id gains nothing.
            rejectConnect(endpoint, correlationId, resume, "session " + resume + ": the resume did not present the " +
                "session's secret" + (session.secret().present() ? "" : " (the session was opened by an older " +
                "version, which gave none: open a new session)"));
            return;
        }
        if (!session.principal().equals(decision.principal()))
        {
            rejectConnect(endpoint, correlationId, resume, "session " + resume + " belongs to another principal");
            return;
        }
        heard(resume, endpoint);
        final long from = lastEgress + 1;
        if (EgressBuffer.GAP == session.egress().replay(from, (sequence, b, o, l) -> sendEgress(endpoint, resume,
            sequence, b, o, l)))
        {
            sendEvent(endpoint, correlationId, resume, SessionEventCode.EGRESS_GAP, session.appliedSequence());
            session.egress().replay(session.egress().firstSequence(),
                (sequence, b, o, l) -> sendEgress(endpoint, resume, sequence, b, o, l));
        }
        sendEvent(endpoint, correlationId, resume, SessionEventCode.OK, session.appliedSequence());
    }

    /**
     * @return why an open from this connection and principal must be refused, or null to append it. Leader-local
     * and on the control path: the scans are bounded by the session table.
     */
    private String openRefusal(final int endpoint, final String principal)
    {
        final SessionTable table = container.sessionTable();
        if (table.size() + pendingOpens.size() >= table.maxSessions())
        {
            return "the session table is full (" + table.maxSessions() + " sessions)";
        }
        if (table.size() + pendingOpens.size() >= memorySessionLimit)
        {
            return "this member's memory holds " + memorySessionLimit + " sessions with full egress buffers " +
                "(lockstep.memory)";
        }
        if (!withinConnectRate(endpoint))
        {
            return "more than " + limits.opensPerSecondPerConnection() + " opens and resumes a second on this " +
                "connection (lockstep.client.session.opens.per.second)";
        }
        final int onConnection = sessionsByEndpoint.get(endpoint);
        if (onConnection >= limits.perConnection())
        {
            return onConnection + " sessions are open on this connection (lockstep.client.sessions.per.connection)";
        }
        final int forPrincipal = table.openFor(principal);
        if (forPrincipal >= limits.perPrincipal())
        {
            return forPrincipal + " sessions are open for this principal (lockstep.client.sessions.per.principal)";
        }
        return null;
    }

    /** A fixed one-second window per connection; windows of connections long gone are swept as the map grows. */
    private boolean withinConnectRate(final int endpoint)
    {
        final long nowNs = consensus.nowNs();
        final long windowNs = 1_000_000_000L;
        long[] window = openWindows.get(endpoint);
        if (null == window)
        {
            if (openWindows.size() >= 4096)
            {
                openWindows.values().removeIf(w -> nowNs - w[0] >= windowNs);
            }
            window = new long[]{ nowNs, 0 };
            openWindows.put(endpoint, window);
        }
        if (nowNs - window[0] >= windowNs)
        {
            window[0] = nowNs;
            window[1] = 0;
        }
        return ++window[1] <= limits.opensPerSecondPerConnection();
    }

    private void onIngress(final int endpoint, final DirectBuffer buffer, final int body, final int end)
    {
        ingress.wrap(buffer, body, header.blockLength(), header.version());
        final long sessionId = ingress.sessionId();
        final long sequence = ingress.sequence();
        final int payloadLength = ingress.payloadLength();
        final int payloadOffset = ingress.limit() + IngressDecoder.payloadHeaderLength();
        if (null == container.sessionTable().get(sessionId))
        {
            sendEvent(endpoint, -1, sessionId, container.sessionTable().wasClosed(sessionId) ?
                SessionEventCode.CLOSED : SessionEventCode.REDIRECT, -1);
            return;
        }
        if (!boundTo(sessionId, endpoint) || container.isSuspended())
        {
            // Suspended: not appended, not acknowledged; the client keeps the message and resends it after resume.
            return;
        }
        if (payloadLength > maxIngressLength || payloadOffset + payloadLength > end)
        {
            sendEvent(endpoint, -1, sessionId, SessionEventCode.ERROR, -1);
            appendClose(sessionId, io.lockstep.consensus.log.CloseReason.ERROR);
            return;
        }
        heard(sessionId, endpoint);
        final int length = sessionMessage.wrapAndApplyHeader(entry, 0, entryHeader)
            .timestamp(consensus.logTimeNs()).sessionId(sessionId).sequence(sequence)
            .putPayload(buffer, payloadOffset, payloadLength).encodedLength();
        if (append(SessionMessageEncoder.TEMPLATE_ID, length) > 0)
        {
            consensus.metrics().increment(MemberMetrics.INGRESS_MESSAGES);
            consensus.metrics().add(MemberMetrics.INGRESS_BYTES, payloadLength);
        }
        else
        {
            consensus.metrics().increment(MemberMetrics.BACK_PRESSURE);
        }
    }

    // ------------------------------------------------------------------------------------------- the outbox

    public void onSessionOpened(final long sessionId, final long correlationId, final int leaderEndpoint)
    {
        if (Role.LEADER == consensus.role() && pendingOpens.remove(new PendingOpen(leaderEndpoint, correlationId)))
        {
            countOnEndpoint(leaderEndpoint, -1);
            if (sessionId < 0)
            {
                consensus.metrics().increment(MemberMetrics.SESSION_OPENS_REFUSED);
                sendEvent(leaderEndpoint, correlationId, -1, SessionEventCode.REFUSED, -1,
                    "the session table is full", SessionSecret.NONE);
                return;
            }
            heard(sessionId, leaderEndpoint);
            // The session is in the table: this is called as its open is applied.
            final SessionSecret secret = container.sessionTable().get(sessionId).secret();
            sendEvent(leaderEndpoint, correlationId, sessionId, SessionEventCode.OK, -1, "", secret);
        }
    }

    public void onEgress(
        final long sessionId, final long sequence, final DirectBuffer buffer, final int offset, final int length)
    {
        final int endpoint = (int)endpointBySession.get(sessionId);
        if (Role.LEADER == consensus.role() && endpoint >= 0)
        {
            // If the transport pushes back the client sees a gap in egress sequences and resumes, and the egress
            // buffer resends: nothing is lost by dropping here.
            sendEgress(endpoint, sessionId, sequence, buffer, offset, length);
        }
    }

    public void onIngressApplied(final long sessionId, final long appliedSequence)
    {
        final int endpoint = (int)endpointBySession.get(sessionId);
        if (Role.LEADER == consensus.role() && endpoint >= 0)
        {
            final int length = ingressAck.wrapAndApplyHeader(out, 0, headerEncoder)
                .sessionId(sessionId).appliedSequence(appliedSequence).leaderTerm(consensus.term())
                .encodedLength();
            transport.send(endpoint, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
        }
    }

    public void onSessionClosed(final long sessionId, final CloseReason reason)
    {
        final int endpoint = (int)endpointBySession.remove(sessionId);
        if (endpoint >= 0)
        {
            countOnEndpoint(endpoint, -1);
        }
        lastHeardNs.remove(sessionId);
        closing.remove(sessionId);
        if (Role.LEADER == consensus.role() && endpoint >= 0)
        {
            sendEvent(endpoint, -1, sessionId, SessionEventCode.CLOSED, -1);
        }
    }

    public void onCloseRequested(final long sessionId)
    {
        if (Role.LEADER == consensus.role() && closing.get(sessionId) < 0)
        {
            appendClose(sessionId, io.lockstep.consensus.log.CloseReason.SERVICE_ACTION);
        }
    }

    // -------------------------------------------------------------------------------------------- helpers

    private void fireTimer(final long correlationId, final long deadline)
    {
        if (firing.get(correlationId) == deadline)
        {
            return;
        }
        final int length = timerEvent.wrapAndApplyHeader(entry, 0, entryHeader)
            .timestamp(consensus.logTimeNs()).correlationId(correlationId).deadline(deadline).encodedLength();
        if (append(TimerEventEncoder.TEMPLATE_ID, length) > 0)
        {
            firing.put(correlationId, deadline);
        }
    }

    private void appendClose(final long sessionId, final io.lockstep.consensus.log.CloseReason reason)
    {
        final int length = sessionClose.wrapAndApplyHeader(entry, 0, entryHeader)
            .timestamp(consensus.logTimeNs()).sessionId(sessionId).reason(reason).encodedLength();
        if (append(SessionCloseEncoder.TEMPLATE_ID, length) > 0)
        {
            closing.put(sessionId, consensus.nowNs());
        }
    }

    private long append(final int type, final int bodyLength)
    {
        return consensus.appendLogEntry(type, entry, 0,
            io.lockstep.consensus.log.MessageHeaderEncoder.ENCODED_LENGTH + bodyLength);
    }

    /**
     * A session speaks only on the connection it was opened or last resumed on, where its principal was
     * authenticated: anything else naming it is answered with a redirect here, which makes a genuine client resume
     * (authenticating again) and gives an impostor nothing.
     */
    private boolean boundTo(final long sessionId, final int endpoint)
    {
        if (endpointBySession.get(sessionId) == endpoint)
        {
            return true;
        }
        sendEvent(endpoint, -1, sessionId, SessionEventCode.REDIRECT, -1);
        return false;
    }

    private ClientAuthenticator.Decision authenticate(final byte[] credentials)
    {
        try
        {
            return authenticator.authenticate(credentials);
        }
        catch (final RuntimeException ex)
        {
            consensus.errors().record("client-auth", "the client authenticator failed: " + ex);
            return ClientAuthenticator.Decision.reject("the cluster could not check the credentials");
        }
    }

    private void rejectConnect(final int endpoint, final long correlationId, final long sessionId, final String reason)
    {
        consensus.metrics().increment(MemberMetrics.CLIENT_AUTH_REJECTED);
        consensus.errors().record("client-auth", "rejected a client " + (sessionId < 0 ? "connect" : "resume of " +
            "session " + sessionId) + ": " + reason);
        sendEvent(endpoint, correlationId, sessionId, SessionEventCode.AUTHENTICATION_REJECTED, -1, reason,
            SessionSecret.NONE);
    }

    private void heard(final long sessionId, final int endpoint)
    {
        if (null != container.sessionTable().get(sessionId))
        {
            final long previous = endpointBySession.put(sessionId, endpoint);
            if (previous != endpoint)
            {
                if (previous >= 0)
                {
                    countOnEndpoint((int)previous, -1);
                }
                countOnEndpoint(endpoint, 1);
            }
            lastHeardNs.put(sessionId, consensus.nowNs());
        }
    }

    private void countOnEndpoint(final int endpoint, final int delta)
    {
        final int count = sessionsByEndpoint.get(endpoint) + delta;
        if (count > 0)
        {
            sessionsByEndpoint.put(endpoint, count);
        }
        else
        {
            sessionsByEndpoint.remove(endpoint);
        }
    }

    /**
     * An open this leader appended, by the connection that asked and its correlation id: two clients may use the
     * same correlation ids, and one connection cannot replace another's pending open.
     */
    private record PendingOpen(int endpoint, long correlationId)
    {
    }

    private void sendEgress(
        final int endpoint, final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final int encoded = egress.wrapAndApplyHeader(out, 0, headerEncoder)
            .sessionId(sessionId).sequence(sequence).putPayload(buffer, offset, length).encodedLength();
        if (transport.send(endpoint, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoded))
        {
            consensus.metrics().increment(MemberMetrics.EGRESS_MESSAGES);
            consensus.metrics().add(MemberMetrics.EGRESS_BYTES, length);
        }
        else
        {
            consensus.metrics().increment(MemberMetrics.BACK_PRESSURE);
        }
    }

    private void sendEvent(
        final int endpoint, final long correlationId, final long sessionId, final SessionEventCode code,
        final long appliedSequence)
    {
        sendEvent(endpoint, correlationId, sessionId, code, appliedSequence, "", SessionSecret.NONE);
    }

    private void sendEvent(
        final int endpoint, final long correlationId, final long sessionId, final SessionEventCode code,
        final long appliedSequence, final String detail, final SessionSecret secret)
    {
        final int length = sessionEvent.wrapAndApplyHeader(out, 0, headerEncoder)
            .correlationId(correlationId).sessionId(sessionId).code(code).leaderId(consensus.leaderId())
            .appliedSequence(appliedSequence).leaderTerm(consensus.term())
            .sessionSecretHigh(secret.high()).sessionSecretLow(secret.low()).detail(detail).encodedLength();
        transport.send(endpoint, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
    }
}
