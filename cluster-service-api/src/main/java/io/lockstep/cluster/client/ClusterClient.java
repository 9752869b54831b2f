package io.lockstep.cluster.client;

import io.lockstep.cluster.JvmOptions;
import io.lockstep.cluster.transport.LinkClass;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.cluster.transport.TlsFiles;
import io.lockstep.cluster.transport.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A client of a Lockstep cluster: one session, kept across leader failovers. Poll-driven and single-threaded, like
 * the rest of Lockstep: call {@link #poll()} in your loop; it does the I/O, sends keepalives, follows redirects,
 * resumes the session on a new leader and resends whatever the cluster had not yet acknowledged (the cluster applies
 * each message once), and hands egress to the listener in order. Back pressure is a return value, never an
 * exception.
 * <pre>{@code
 * try (ClusterClient client = ClusterClient.connect(members, (sessionId, sequence, buffer, offset, length) -> ...))
 * {
 *     client.awaitConnected(5_000);
 *     while (client.offer(buffer, 0, length) == ClusterClient.BACK_PRESSURED)
 *     {
 *         client.poll();
 *     }
 *     ...
 * }
 * }</pre>
 */
public final class ClusterClient implements AutoCloseable
{
    /** Too many messages await acknowledgement: poll, then offer again. */
    public static final long BACK_PRESSURED = SessionClient.BACK_PRESSURED;
    /** The session is closed. */
    public static final long CLOSED = SessionClient.CLOSED;
    /** The message is longer than {@link Settings#maxMessageLength()}. */
    public static final long TOO_LONG = SessionClient.TOO_LONG;

    /**
     * How the client behaves; {@link #DEFAULTS} suits a LAN cluster with the {@code lan} timeouts.
     *
     * @param keepAliveIntervalMs an idle client says it is alive this often; keep it well under the cluster's
     *                            session timeout (default 50 ms against 10 s).
     * @param silenceTimeoutMs    a member silent this long is given up on and the session resumed on another;
     *                            longer than the cluster's election time, shorter than its session timeout
     *                            (default 300 ms: a hung leader is left after about that, and the lan election
     *                            has picked a new one by then).
     * @param maxUnacknowledged   messages kept for resending until the cluster acknowledges them; {@link #offer}
     *                            is back-pressured beyond it (default 4,096).
     * @param maxMessageLength    the longest message {@link #offer} takes (default 64 KiB; the cluster's ingress
     *                            bound must be at least this).
     */
    public record Settings(long keepAliveIntervalMs, long silenceTimeoutMs, int maxUnacknowledged, int maxMessageLength)
    {
        /** 50 ms keepalive, 300 ms silence timeout, 4,096 unacknowledged, 64 KiB messages. */
        public static final Settings DEFAULTS = new Settings(50, 300, 4096, 64 * 1024);

        public Settings
        {
            if (keepAliveIntervalMs <= 0 || silenceTimeoutMs <= keepAliveIntervalMs || maxUnacknowledged <= 0 ||
                maxMessageLength <= 0 || maxMessageLength > 1024 * 1024 - 256)
            {
                throw new IllegalArgumentException("client settings out of range: keepAliveIntervalMs=" +
                    keepAliveIntervalMs + " (> 0), silenceTimeoutMs=" + silenceTimeoutMs + " (> keepalive), " +
                    "maxUnacknowledged=" + maxUnacknowledged + " (> 0), maxMessageLength=" + maxMessageLength +
                    " (1 to 1 MiB - 256)");
            }
        }
    }

    /** Receives egress. */
    @FunctionalInterface
    public interface EgressListener
    {
        void onMessage(long sessionId, long sequence, DirectBuffer buffer, int offset, int length);

        /**
         * Egress from fromSequence up to the next one delivered is gone for good (the client was away longer than the
         * cluster buffers egress).
         */
        default void onEgressGap(final long sessionId, final long fromSequence)
        {
        }

        default void onSessionClosed(final long sessionId)
        {
        }
    }

    private final Transport transport;
    private final SessionClient session;
    private final NanoClock clock;

    private ClusterClient(
        final List<Member> members, final EgressListener listener, final NanoClock clock, final Settings settings,
        final byte[] credentials, final TlsFiles tls)
    {
        this(tcp(members, tls), members.stream().mapToInt(Member::id).toArray(), listener, clock, settings,
            credentials);
    }

    private ClusterClient(
        final Transport transport, final int[] ids, final EgressListener listener, final NanoClock clock,
        final Settings settings, final byte[] credentials)
    {
        this.clock = clock;
        this.transport = transport;
        this.session = new SessionClient(transport, ids, new SessionClient.Listener()
        {
            public void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
                final int length)
            {
                listener.onMessage(sessionId, sequence, buffer, offset, length);
            }

            public void onEgressGap(final long sessionId, final long fromSequence)
            {
                listener.onEgressGap(sessionId, fromSequence);
            }

            public void onClosed(final long sessionId)
            {
                listener.onSessionClosed(sessionId);
            }
        }, TimeUnit.MILLISECONDS.toNanos(settings.keepAliveIntervalMs()),
            TimeUnit.MILLISECONDS.toNanos(settings.silenceTimeoutMs()), settings.maxUnacknowledged(),
            settings.maxMessageLength(), credentials);
    }

    private static TcpTransport tcp(final List<Member> members, final TlsFiles tls)
    {
        JvmOptions.check();
        // 1 MiB bounds one message either way; every connection holds buffers of a few times that.
        final TcpTransport transport = new TcpTransport(-1, members, 1024 * 1024);
        if (null != tls)
        {
            transport.tls(tls, EnumSet.of(LinkClass.CLIENTS));
        }
        return transport;
    }

    /**
     * A client over a network and a clock of your own rather than TCP and the system clock: the test kit's
     * simulation hands these out ({@code ServiceSimulation.Run.client}), so that one driver of {@code ClusterClient}
     * serves a simulated cluster and a real one. {@link #awaitConnected} waits in real time, in which a simulated
     * cluster does not move: with a simulated clock, step the simulation and poll until {@link #isConnected()}.
     *
     * @param transport the client's side of the network; closed with the client.
     * @param memberIds the members' ids, the endpoints to try.
     * @param listener  told of each egress message, on the thread that polls.
     * @param clock     the time {@link #poll()} runs at.
     * @param settings  timeouts and bounds, in that clock's time.
     * @return the client.
     */
    public static ClusterClient over(
        final Transport transport, final int[] memberIds, final EgressListener listener, final NanoClock clock,
        final Settings settings)
    {
        JvmOptions.check();
        return new ClusterClient(Objects.requireNonNull(transport, "transport"),
            Objects.requireNonNull(memberIds, "memberIds").clone(),
            Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(clock, "clock"),
            Objects.requireNonNull(settings, "settings"), new byte[0]);
    }

    /**
     * Start connecting to the cluster; the session opens during later polls ({@link #awaitConnected}).
     *
     * @param endpoints the members, {@code id=host:port} comma separated, as in the members' configuration
     *                  ({@code 0=10.0.1.1:9101,1=10.0.2.1:9101,2=10.0.3.1:9101}): any one will do, followers
     *                  redirect to the leader.
     * @param listener  told of each egress message, on the thread that polls.
     * @return the client.
     * @throws IllegalArgumentException naming an endpoint that is not {@code id=host:port}.
     */
    public static ClusterClient connect(final String endpoints, final EgressListener listener)
    {
        return connect(Endpoints.parse(endpoints), listener);
    }

    /**
     * Start connecting to the cluster, with everything a client may set.
     *
     * @param endpoints   the members, {@code id=host:port} comma separated (see {@link #connect(String,
     *                    EgressListener)}).
     * @param listener    told of each egress message, on the thread that polls.
     * @param settings    timeouts and bounds ({@link Settings#DEFAULTS}).
     * @param credentials what the cluster's client authenticator checks (empty for none).
     * @param tls         the authority that signs the members' certificates, to connect over TLS; null for the
     *                    clear.
     * @return the client.
     * @throws IllegalArgumentException naming an endpoint that is not {@code id=host:port}.
     */
    public static ClusterClient connect(
        final String endpoints, final EgressListener listener, final Settings settings, final byte[] credentials,
        final TlsFiles tls)
    {
        return new ClusterClient(Endpoints.parse(endpoints), listener, new SystemNanoClock(), settings, credentials,
            tls);
    }

    /**
     * Start connecting; the session opens during later polls.
     *
     * @param members  the cluster's members (any one will do: followers redirect to the leader).
     * @param listener receives egress.
     * @return the client.
     */
    public static ClusterClient connect(final List<Member> members, final EgressListener listener)
    {
        return connect(members, listener, Settings.DEFAULTS);
    }

    /**
     * Start connecting, with settings of your own.
     *
     * @param members  the cluster's members (any one will do: followers redirect to the leader).
     * @param listener receives egress.
     * @param settings keepalive, silence timeout and bounds.
     * @return the client.
     */
    public static ClusterClient connect(final List<Member> members, final EgressListener listener,
        final Settings settings)
    {
        return new ClusterClient(members, listener, new SystemNanoClock(), settings, new byte[0], null);
    }

    /**
     * Start connecting to a cluster that authenticates its clients.
     *
     * @param members     the cluster's members (any one will do: followers redirect to the leader).
     * @param listener    receives egress.
     * @param settings    keepalive, silence timeout and bounds.
     * @param credentials what the cluster's {@code ClientAuthenticator} expects (for the shipped token
     *                    authenticator: {@code principal:token} in US-ASCII); sent at connect and again with every
     *                    resume after a failover, so the new leader checks them too.
     * @return the client; if the cluster rejects the credentials it closes, and {@link #closeReason()} says why.
     */
    public static ClusterClient connect(final List<Member> members, final EgressListener listener,
        final Settings settings, final byte[] credentials)
    {
        return new ClusterClient(members, listener, new SystemNanoClock(), settings, credentials, null);
    }

    /**
     * Start connecting over TLS, to a cluster that encrypts its client links ({@code lockstep.tls.links=clients}).
     *
     * @param members     the cluster's members (any one will do: followers redirect to the leader); each member's
     *                    certificate must name the host given here.
     * @param listener    receives egress.
     * @param settings    keepalive, silence timeout and bounds.
     * @param credentials what the cluster's {@code ClientAuthenticator} expects; empty for none.
     * @param tls         whom to trust: {@code TlsFiles.trusting(Path.of("ca.pem"))}, the authority that signs the
     *                    members' certificates. A connection to a member whose certificate it does not trust is
     *                    dropped, and the next member tried.
     * @return the client.
     */
    public static ClusterClient connect(final List<Member> members, final EgressListener listener,
        final Settings settings, final byte[] credentials, final TlsFiles tls)
    {
        return new ClusterClient(members, listener, new SystemNanoClock(), settings, credentials,
            Objects.requireNonNull(tls, "tls"));
    }

    /**
     * Poll until the session is open.
     *
     * @return true if it opened within the timeout.
     */
    public boolean awaitConnected(final long timeoutMs)
    {
        // Real time, whatever the client's clock: a simulated clock stands still while this waits.
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!session.isConnected() && System.nanoTime() < deadline)
        {
            if (0 == poll())
            {
                LockSupport.parkNanos(100_000);
            }
        }
        return session.isConnected();
    }

    /**
     * Queue a message for the cluster: it is sent on the next {@link #poll()} (everything queued since the last poll
     * in one write), and kept until acknowledged.
     *
     * @return its sequence number, or {@link #BACK_PRESSURED}, {@link #TOO_LONG} or {@link #CLOSED}.
     */
    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        return session.offer(buffer, offset, length);
    }

    /**
     * Do the I/O: send, receive, keep alive, fail over.
     *
     * @return work done (0 means there was nothing to do: idle a little).
     */
    public int poll()
    {
        return session.doWork(clock.nanoTime());
    }

    public boolean isConnected()
    {
        return session.isConnected();
    }

    /**
     * @return true once the session is closed for good (by the cluster, by {@link #close}, or because the cluster
     * rejected the credentials).
     */
    public boolean isClosed()
    {
        return session.isClosed();
    }

    /**
     * @return why the session closed, or null while it is not closed.
     */
    public String closeReason()
    {
        return session.closeReason();
    }

    /**
     * @return acknowledged messages the cluster turned out not to hold when the session resumed, 0 unless a standby
     * zone was promoted in asynchronous mode without them (the session is then closed: see {@link #closeReason()}).
     */
    public long lostAcknowledged()
    {
        return session.lostAcknowledged();
    }

    public long sessionId()
    {
        return session.sessionId();
    }

    /**
     * @return the id of the member this client talks to now (the leader, once the session is open).
     */
    public int memberId()
    {
        return session.currentMember();
    }

    /**
     * @return the leader as far as this client knows (the member its open session is on, else the one a member
     * last named), or -1 if it knows none yet.
     */
    public int leaderId()
    {
        return session.knownLeader();
    }

    /**
     * @return the highest sequence the cluster has applied.
     */
    public long acknowledgedSequence()
    {
        return session.ackedSequence();
    }

    /**
     * @return how many times the session was resumed because egress arrived with a gap.
     */
    public long gapResumes()
    {
        return session.gapResumes();
    }

    /**
     * Close the session and the connections. The cluster is asked to close the session now (freeing it and its
     * egress buffer at once rather than at the session timeout); messages not yet acknowledged are not sent.
     */
    public void close()
    {
        if (session.close())
        {
            transport.flush(clock.nanoTime());
        }
        transport.close();
    }
}
