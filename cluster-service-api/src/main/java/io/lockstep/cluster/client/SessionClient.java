package io.lockstep.cluster.client;

import io.lockstep.cluster.codecs.EgressDecoder;
import io.lockstep.cluster.codecs.IngressAckDecoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.KeepAliveEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionCloseRequestEncoder;
import io.lockstep.cluster.codecs.SessionConnectEncoder;
import io.lockstep.cluster.codecs.SessionEventCode;
import io.lockstep.cluster.codecs.SessionEventDecoder;
import io.lockstep.cluster.transport.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The client side of a session, as a duty-cycle object over a {@link Transport}: finds the leader (following
 * redirects), opens a session, sends ingress with consecutive sequence numbers, and keeps every message until the
 * leader says it is applied. When the leader goes away it resumes the session on the next one, saying which egress
 * it last received, and resends what was not acknowledged: the cluster applies each sequence once, so nothing is
 * lost or applied twice. Egress arrives in order; a duplicate is dropped; a gap makes the client resume, and a gap
 * the cluster can no longer fill is reported to the listener, never hidden.
 * <p>
 * The user-facing {@link ClusterClient} wraps this over TCP; the simulation drives it over its own network.
 */
public final class SessionClient
{
    /** Returned by {@link #offer} when too many messages await acknowledgement. */
    public static final long BACK_PRESSURED = -2;
    /** Returned by {@link #offer} once the session is closed. */
    public static final long CLOSED = -4;
    /** Returned by {@link #offer} for a message longer than the bound this client was made with. */
    public static final long TOO_LONG = -5;
    private static final long RETRY_DELAY_NS = 10_000_000L;
    /** After a resume refused for the opens-a-second bound: past the second the bound counts. */
    private static final long RESUME_REFUSED_DELAY_NS = 1_000_000_000L;

    /** Receives what the cluster sends. */
    public interface Listener
    {
        void onEgress(long sessionId, long sequence, DirectBuffer buffer, int offset, int length);

        /** Egress from {@code fromSequence} up to the next one delivered is gone for good. */
        void onEgressGap(long sessionId, long fromSequence);

        void onClosed(long sessionId);
    }

    private enum State
    {
        DISCONNECTED, CONNECTING, CONNECTED, CLOSED
    }

    private final Transport transport;
    private final int[] memberIds;
    private final Listener listener;
    private final long keepAliveIntervalNs;
    private final long silenceTimeoutNs;
    private final int maxMessageLength;
    private final PendingMessages unacked;
    private final IngressEncoder ingressEncoder = new IngressEncoder();
    private final KeepAliveEncoder keepAliveEncoder = new KeepAliveEncoder();
    private final SessionConnectEncoder connectEncoder = new SessionConnectEncoder();
    private final SessionCloseRequestEncoder closeEncoder = new SessionCloseRequestEncoder();
    private final UnsafeBuffer out;
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final SessionEventDecoder event = new SessionEventDecoder();
    private final IngressAckDecoder ack = new IngressAckDecoder();
    private final EgressDecoder egress = new EgressDecoder();
    private final Transport.MessageHandler onMessage = this::onMessage;
    private State state = State.DISCONNECTED;
    private int target;
    private long sessionId = -1;
    /** The session secret the open returned: every resume presents it, and no one else has it. */
    private long secretHigh;
    private long secretLow;
    private long nextSequence;
    private long ackedSequence = -1;
    private long sentUpTo = -1;
    /** When the acknowledged sequence last moved (or everything was last resent). */
    private long ackProgressNs;
    private long lastEgress = -1;
    private boolean gapReported;
    private long connectCorrelationId;
    private long connectSentNs;
    private long lastSentNs;
    private long lastHeardNs;
    private long nowNs;
    private long retryAtNs;
    private long gapResumes;
    private long lostAcknowledged;
    /** Highest term of a leader that acknowledged to this session: a resume answered from an older one is stale. */
    private long ackTerm = Long.MIN_VALUE;
    private int leaderHint = -1;
    private final byte[] credentials;
    private String closeReason;

    /**
     * @param transport           in client mode (connects to every member).
     * @param memberIds           the members to try.
     * @param listener            receives egress and events.
     * @param keepAliveIntervalNs how often an idle client says it is alive.
     * @param silenceTimeoutNs    a member silent this long is given up on, and the session resumed elsewhere.
     * @param maxUnacked          bound on messages awaiting acknowledgement (back pressure beyond it, or beyond
     *                            4 MiB of their bodies when that is less than every one at maxMessageLength).
     * @param maxMessageLength    bound on one message's length ({@link #TOO_LONG} beyond it).
     */
    public SessionClient(
        final Transport transport,
        final int[] memberIds,
        final Listener listener,
        final long keepAliveIntervalNs,
        final long silenceTimeoutNs,
        final int maxUnacked,
        final int maxMessageLength)
    {
        this(transport, memberIds, listener, keepAliveIntervalNs, silenceTimeoutNs, maxUnacked, maxMessageLength,
            new byte[0]);
    }

    /**
     * @param credentials for the cluster's client authenticator: sent with every connect and resume.
     */
    public SessionClient(
        final Transport transport,
        final int[] memberIds,
        final Listener listener,
        final long keepAliveIntervalNs,
        final long silenceTimeoutNs,
        final int maxUnacked,
        final int maxMessageLength,
        final byte[] credentials)
    {
        this.credentials = credentials.clone();
        this.maxMessageLength = maxMessageLength;
        // Room for the largest message and its headers.
        this.out = new UnsafeBuffer(new byte[maxMessageLength + 256]);
        this.transport = transport;
        this.memberIds = memberIds.clone();
        this.listener = listener;
        this.keepAliveIntervalNs = keepAliveIntervalNs;
        this.silenceTimeoutNs = silenceTimeoutNs;
        // Bodies of unacknowledged messages, copied once: 4 MiB and room for two of the longest, but never more than
        // every slot holding the longest would need.
        this.unacked = new PendingMessages(maxUnacked, (int)Math.min((long)maxUnacked * maxMessageLength,
            Math.max(4L << 20, 2L * maxMessageLength)));
    }

    /**
     * Queue a message; it is sent (and resent after a failover) until acknowledged.
     *
     * @return its sequence number, or {@link #BACK_PRESSURED} or {@link #CLOSED}.
     */
    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        if (State.CLOSED == state)
        {
            return CLOSED;
        }
        if (length > maxMessageLength)
        {
            return TOO_LONG;
        }
        if (!unacked.add(nextSequence, buffer, offset, length))
        {
            return BACK_PRESSURED;
        }
        return nextSequence++;
    }

    /**
     * @return work done.
     */
    public int doWork(final long nowNs)
    {
        this.nowNs = nowNs;
        int work = transport.poll(nowNs, onMessage);
        if ((State.CONNECTING == state || State.CONNECTED == state) && !transport.isConnected(memberIds[target]))
        {
            // The connection died (the member crashed or went away): try the next one now, not after a timeout.
            nextMember(-1);
            state = State.DISCONNECTED;
        }
        switch (state)
        {
            case DISCONNECTED ->
            {
                if (nowNs >= retryAtNs)
                {
                    work += connect();
                }
            }
            case CONNECTING ->
            {
                if (nowNs - connectSentNs > silenceTimeoutNs)
                {
                    nextMember(-1);
                    state = State.DISCONNECTED;
                }
            }
            case CONNECTED ->
            {
                if (nowNs - lastHeardNs > silenceTimeoutNs)
                {
                    nextMember(-1);
                    state = State.DISCONNECTED;
                }
                else
                {
                    if (sentUpTo > ackedSequence && nowNs - ackProgressNs > silenceTimeoutNs / 2)
                    {
                        // Sent but not acknowledged for a while although the member answers: a message was dropped
                        // on the way in (the leader refuses one that arrives out of order, or when its log batch
                        // is full), and everything after it waits for it. Send everything unacknowledged again;
                        // what was applied already is acknowledged, not applied twice.
                        sentUpTo = ackedSequence;
                        ackProgressNs = nowNs;
                    }
                    work += sendPending();
                    if (nowNs - lastSentNs >= keepAliveIntervalNs)
                    {
                        final int length = keepAliveEncoder.wrapAndApplyHeader(out, 0, headerEncoder)
                            .sessionId(sessionId).lastEgressSequence(lastEgress).encodedLength();
                        send(length);
                    }
                }
            }
            default ->
            {
            }
        }
        return work + transport.flush(nowNs);
    }

    public long sessionId()
    {
        return sessionId;
    }

    public boolean isConnected()
    {
        return State.CONNECTED == state;
    }

    /**
     * @return how many times this client resumed its session because egress arrived with a gap.
     */
    public long gapResumes()
    {
        return gapResumes;
    }

    /**
     * @return the member this client talks to now (the leader, once connected).
     */
    public int currentMember()
    {
        return memberIds[target];
    }

    /**
     * Close the session: ask the member this client talks to (the leader, once connected) to close it, so that the
     * cluster frees the session and its egress buffer now rather than at the session timeout. Messages not yet
     * acknowledged are not sent. After this, {@link #offer} returns {@link #CLOSED}.
     *
     * @return true if the request was handed to the transport (false if no connection was up: the session then
     * ends at the cluster's session timeout).
     */
    public boolean close()
    {
        if (State.CLOSED == state)
        {
            return false;
        }
        final boolean connected = State.CONNECTED == state && sessionId >= 0;
        state = State.CLOSED;
        closeReason = "closed by this client";
        unacked.clear();
        if (!connected)
        {
            return false;
        }
        final int length = closeEncoder.wrapAndApplyHeader(out, 0, headerEncoder)
            .sessionId(sessionId).encodedLength();
        return transport.send(memberIds[target], out, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    /**
     * @return the leader as far as this client knows: the member its open session is on, else the leader a member
     * last named in a redirect, else -1.
     */
    public int knownLeader()
    {
        return State.CONNECTED == state ? memberIds[target] : leaderHint;
    }

    /**
     * @return why the session closed (authentication rejected, closed by the cluster, closed here), or null while
     * open.
     */
    public String closeReason()
    {
        return closeReason;
    }

    public boolean isClosed()
    {
        return State.CLOSED == state;
    }

    /**
     * @return acknowledged messages the cluster turned out not to hold when this session resumed (only after a
     * promotion of an asynchronous standby zone; the session is then closed, see {@link #closeReason()}), else 0.
     */
    public long lostAcknowledged()
    {
        return lostAcknowledged;
    }

    /**
     * @return the highest sequence the cluster has applied.
     */
    public long ackedSequence()
    {
        return ackedSequence;
    }

    /**
     * @return the sequence the next offer gets.
     */
    public long nextSequence()
    {
        return nextSequence;
    }

    private int connect()
    {
        connectCorrelationId++;
        final int length = connectEncoder.wrapAndApplyHeader(out, 0, headerEncoder)
            .correlationId(connectCorrelationId).resumeSessionId(sessionId).lastEgressSequence(lastEgress)
            .sessionSecretHigh(secretHigh).sessionSecretLow(secretLow)
            .putCredentials(credentials, 0, credentials.length)
            .encodedLength();
        if (transport.send(memberIds[target], out, 0, MessageHeaderEncoder.ENCODED_LENGTH + length))
        {
            state = State.CONNECTING;
            connectSentNs = nowNs;
            lastSentNs = nowNs;
            return 1;
        }
        nextMember(-1);
        return 0;
    }

    private int sendPending()
    {
        int sent = 0;
        // Indexed, not iterated: this runs on the sender's hot path and must not allocate.
        for (int i = (int)Math.max(0, sentUpTo + 1 - unacked.sequenceAt(0)), n = unacked.size(); i < n; i++)
        {
            final long sequence = unacked.sequenceAt(i);
            final int length = ingressEncoder.wrapAndApplyHeader(out, 0, headerEncoder)
                .sessionId(sessionId).sequence(sequence)
                .putPayload(unacked.buffer(), unacked.offsetAt(i), unacked.lengthAt(i)).encodedLength();
            if (!send(length))
            {
                break;
            }
            sentUpTo = sequence;
            sent++;
        }
        return sent;
    }

    private boolean send(final int bodyLength)
    {
        if (transport.send(memberIds[target], out, 0, MessageHeaderEncoder.ENCODED_LENGTH + bodyLength))
        {
            lastSentNs = nowNs;
            return true;
        }
        if (State.CONNECTED == state)
        {
            // The connection is gone (or jammed): resume elsewhere, resending what is not acknowledged.
            state = State.DISCONNECTED;
            nextMember(-1);
        }
        return false;
    }

    private void onMessage(final int from, final DirectBuffer buffer, final int offset, final int length)
    {
        header.wrap(buffer, offset);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID || from != memberIds[target])
        {
            return;
        }
        lastHeardNs = nowNs;
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        switch (header.templateId())
        {
            case SessionEventDecoder.TEMPLATE_ID -> onEvent(buffer, body);
            case IngressAckDecoder.TEMPLATE_ID ->
            {
                ack.wrap(buffer, body, header.blockLength(), header.version());
                if (ack.sessionId() == sessionId)
                {
                    ackTerm = Math.max(ackTerm, ack.leaderTerm());
                    acknowledge(ack.appliedSequence());
                }
            }
            case EgressDecoder.TEMPLATE_ID -> onEgress(buffer, body);
            default ->
            {
            }
        }
    }

    // Longer than the method bound: one case per session event code, each a few lines: the client's state table in one
    // place.
    @SuppressWarnings("checkstyle:MethodLength")
    private void onEvent(final DirectBuffer buffer, final int body)
    {
        event.wrap(buffer, body, header.blockLength(), header.version());
        final SessionEventCode code = event.code();
        if (SessionEventCode.REDIRECT == code)
        {
            nextMember(event.leaderId());
            state = State.DISCONNECTED;
            // Wait a little (an election is on, or the leader is still catching up) rather than ask every cycle.
            retryAtNs = nowNs + RETRY_DELAY_NS;
            return;
        }
        if (SessionEventCode.AUTHENTICATION_REJECTED == code || SessionEventCode.REFUSED == code)
        {
            if (State.CONNECTING == state && event.correlationId() == connectCorrelationId &&
                SessionEventCode.REFUSED == code && sessionId >= 0)
            {
                // A resume over the member's opens-a-second bound: the session still exists, so wait out the
                // second and resume again rather than give it up.
                state = State.DISCONNECTED;
                retryAtNs = nowNs + RESUME_REFUSED_DELAY_NS;
            }
            else if (State.CONNECTING == state && event.correlationId() == connectCorrelationId)
            {
                // The cluster's decision, not one member's mood: trying the next member would get the same answer.
                closeReason = (SessionEventCode.REFUSED == code ? "session open refused: " :
                    "authentication rejected: ") + event.detail();
                state = State.CLOSED;
                listener.onClosed(sessionId);
            }
            return;
        }
        if (event.sessionId() != sessionId && !(sessionId < 0 && event.correlationId() == connectCorrelationId))
        {
            return;
        }
        switch (code)
        {
            case OK ->
            {
                if (State.CONNECTING == state && event.correlationId() == connectCorrelationId &&
                    sessionId >= 0 && event.appliedSequence() < ackedSequence && event.leaderTerm() < ackTerm)
                {
                    // A deposed leader that does not know it yet answers for an older term: ask elsewhere.
                    nextMember(-1);
                    state = State.DISCONNECTED;
                    retryAtNs = nowNs + RETRY_DELAY_NS;
                }
                else if (State.CONNECTING == state && event.correlationId() == connectCorrelationId &&
                    sessionId >= 0 && event.appliedSequence() < ackedSequence)
                {
                    // A leader of this or a later term that lacks what was acknowledged: only a standby zone promoted
                    // in asynchronous mode can forget that (Raft's leader completeness holds within a configuration).
                    // Say exactly which messages are gone, and stop, rather than resend nothing and wait forever.
                    lostAcknowledged = ackedSequence - event.appliedSequence();
                    closeReason = "the cluster no longer holds " + lostAcknowledged + " acknowledged message(s), " +
                        "sequences " + (event.appliedSequence() + 1) + ".." + ackedSequence + " of session " +
                        sessionId + ": it failed over to a standby zone that had not received them (asynchronous " +
                        "standby mode); open a new session";
                    state = State.CLOSED;
                    listener.onClosed(sessionId);
                }
                else if (State.CONNECTING == state && event.correlationId() == connectCorrelationId)
                {
                    ackTerm = Math.max(ackTerm, event.leaderTerm());
                    if (sessionId < 0)
                    {
                        secretHigh = event.sessionSecretHigh();
                        secretLow = event.sessionSecretLow();
                    }
                    sessionId = event.sessionId();
                    state = State.CONNECTED;
                    lastHeardNs = nowNs;
                    acknowledge(event.appliedSequence());
                    sentUpTo = ackedSequence;
                }
            }
            case EGRESS_GAP ->
            {
                gapReported = true;
                listener.onEgressGap(sessionId, lastEgress + 1);
            }
            case CLOSED, ERROR ->
            {
                closeReason = SessionEventCode.CLOSED == code ? "closed by the cluster" : "closed by the cluster " +
                    "after a malformed or oversized message";
                state = State.CLOSED;
                listener.onClosed(sessionId);
            }
            default ->
            {
            }
        }
    }

    private void onEgress(final DirectBuffer buffer, final int body)
    {
        egress.wrap(buffer, body, header.blockLength(), header.version());
        if (egress.sessionId() != sessionId)
        {
            return;
        }
        final long sequence = egress.sequence();
        if (sequence <= lastEgress)
        {
            return;
        }
        if (sequence != lastEgress + 1 && !gapReported)
        {
            // Missed some (dropped under back pressure): resume, and the leader resends from its buffer.
            state = State.DISCONNECTED;
            gapResumes++;
            return;
        }
        gapReported = false;
        lastEgress = sequence;
        final int payloadLength = egress.payloadLength();
        final int payloadOffset = egress.limit() + EgressDecoder.payloadHeaderLength();
        listener.onEgress(sessionId, sequence, buffer, payloadOffset, payloadLength);
    }

    private void acknowledge(final long applied)
    {
        if (applied > ackedSequence)
        {
            ackProgressNs = nowNs;
        }
        ackedSequence = Math.max(ackedSequence, applied);
        unacked.acknowledge(ackedSequence);
    }

    private void nextMember(final int leaderHint)
    {
        if (leaderHint >= 0)
        {
            this.leaderHint = leaderHint;
        }
        for (int i = 0; i < memberIds.length; i++)
        {
            if (memberIds[i] == leaderHint)
            {
                target = i;
                return;
            }
        }
        target = (target + 1) % memberIds.length;
    }
}
