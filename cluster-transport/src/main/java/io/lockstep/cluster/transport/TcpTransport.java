package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.HeartbeatEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;

/**
 * Non-blocking TCP between members, and from tools and drivers (selfId -1: connects to every member, listens on
 * nothing). One connection per member pair: the member with the lower id connects, retrying with a backoff from
 * 10 ms doubling to 1 s. Each message travels as an int32 length (little-endian) followed by an SBE message of a
 * schema the owner accepts (the client protocol always); the first message on a connection is {@code Hello}, which
 * says who is speaking. Writes are queued in a bounded buffer per connection and written on {@link #flush}: one
 * write per connection per duty cycle.
 * <p>
 * With a {@link ClusterSecret}, a connection claiming a member id proves the member secret, and one wanting to be
 * trusted as an operator tool proves the tool secret ({@link #toolSecret}), in a challenge both ways ({@code Hello}
 * with a nonce, {@code HelloReply} with the member's nonce and proof, {@code HelloProof}); a plain client skips it
 * and is never trusted (see {@link #isTrusted}). The two secrets are separate so that a host that runs tools holds
 * nothing that lets it pose as a member. A peer that
 * sends garbage (a bad length, another schema, a newer version, a first message that is not Hello, a member id not
 * configured, a different log segment length, a wrong proof, no handshake within 5 s) is disconnected with the
 * reason logged and told to the {@link ProblemListener}, and the member carries on.
 */
public final class TcpTransport implements Transport
{
    private static final System.Logger LOGGER = System.getLogger(TcpTransport.class.getName());
    private static final int LENGTH_PREFIX = Integer.BYTES;
    private static final long MIN_BACKOFF_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_BACKOFF_NS = TimeUnit.SECONDS.toNanos(1);
    /** A member connection heard from this recently is alive: another that claims its id is named as a problem. */
    private static final long LIVE_MEMBER_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long SWEEP_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int ACCEPTS_PER_POLL = 16;
    /**
     * A client or tool writes at least this often on every connection, a heartbeat where it has nothing else to
     * say: well inside the shortest idle limit a member's configuration accepts (10 s).
     */
    static final long HEARTBEAT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(3);
    /**
     * Connections accepted but silent past this are dropped, so that a flood of idle connects cannot use up the
     * client slots.
     */
    private static final long HANDSHAKE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    private final int selfId;
    /** An array, not a List: iterating a List each duty cycle allocates an iterator. */
    private final Member[] members;
    private final int segmentLength;
    private final int writeBufferLength;
    private final int readBufferLength;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final ConnectionTable connections;
    private final long[] nextConnectNs;
    private final long[] backoffNs;
    /** Null: no member authentication (every connection is trusted, as the start-up warning says). */
    private final ClusterSecret secret;
    private final HelloHandshake hello;
    private ProblemListener problems = problem -> { };
    private ConnectionLimits limits = ConnectionLimits.DEFAULTS;
    private long nextSweepNs;
    private long nextHeartbeatNs;
    /** A log budget per kind of problem: a flood of one leaves the others' lines. */
    private final DroppedConnectionLog connectionLog;
    private final DroppedConnectionLog identityLog;
    private final DroppedConnectionLog replacedLog;
    private final UnsafeBuffer heartbeat = new UnsafeBuffer(new byte[MessageHeaderEncoder.ENCODED_LENGTH]);
    private final Consumer<SelectionKey> onReady = this::onReady;
    /** What the last idle wait found ready: the next poll handles it instead of selecting. */
    private final ReadyKeys woken;
    private TlsPolicy tls = new TlsPolicy(null, EnumSet.noneOf(LinkClass.class));
    /** TLS connections with records read but not yet decrypted, and no socket readiness left to announce them. */
    private final ArrayDeque<TcpConnection> readQueue = new ArrayDeque<>();
    private final ConnectionReader reader;
    private long nowNs;
    private int work;

    /**
     * A transport without member authentication that reads the client protocol only: for clients, which never hold
     * a secret.
     *
     * @param selfId           -1: a client listens on nothing.
     * @param members          every member.
     * @param maxMessageLength bound on one message; longer is garbage.
     */
    public TcpTransport(final int selfId, final List<Member> members, final int maxMessageLength)
    {
        this(selfId, members, 0, maxMessageLength, null, ClientProtocolShapes.create());
    }

    /**
     * @param selfId           this member's id, or -1 for a tool or driver (which listens on nothing).
     * @param members          every member.
     * @param segmentLength    this member's log segment length (checked against every peer's).
     * @param maxMessageLength bound on one message; longer is garbage.
     * @param secret           a member's: the member secret, which it requires of members and proves to those it
     *                         connects to; a tool's: the tool secret it proves to members. Null for none.
     * @param shapes           the schemas this side reads, with the shape of every message: each message is
     *                         checked against them before any decoder sees it. Must include the client protocol
     *                         ({@link ClientProtocolShapes#create()}), which carries the handshake.
     */
    public TcpTransport(
        final int selfId,
        final List<Member> members,
        final int segmentLength,
        final int maxMessageLength,
        final ClusterSecret secret,
        final MessageShapes shapes)
    {
        if (shapes.newestVersion(MessageHeaderDecoder.SCHEMA_ID) < 0)
        {
            throw new IllegalArgumentException("a transport reads the client protocol, which carries the handshake");
        }
        this.selfId = selfId;
        this.connectionLog = new DroppedConnectionLog("connection", selfId);
        this.identityLog = new DroppedConnectionLog("identity", selfId);
        this.replacedLog = new DroppedConnectionLog("replaced member", selfId);
        this.secret = secret;
        new HeartbeatEncoder().wrapAndApplyHeader(heartbeat, 0, new MessageHeaderEncoder());
        this.members = members.toArray(new Member[0]);
        this.hello = new HelloHandshake(selfId, this.members, segmentLength, secret);
        this.segmentLength = segmentLength;
        this.reader = new ConnectionReader(new ReaderOwner(), new FrameValidator(shapes), maxMessageLength, tls);
        this.writeBufferLength = 4 * (maxMessageLength + LENGTH_PREFIX);
        this.readBufferLength = BitUtil.findNextPositivePowerOfTwo(maxMessageLength + LENGTH_PREFIX) * 2;
        int maxId = 0;
        for (final Member m : members)
        {
            maxId = Math.max(maxId, m.id());
        }
        woken = new ReadyKeys(this.members.length + ConnectionLimits.DEFAULTS.maxClients() + 1);
        connections = new ConnectionTable(maxId);
        nextConnectNs = new long[maxId + 1];
        backoffNs = new long[maxId + 1];
        Arrays.fill(backoffNs, MIN_BACKOFF_NS);
        Selector openedSelector = null;
        ServerSocketChannel openedServer = null;
        try
        {
            openedSelector = Selector.open();
            if (selfId >= 0)
            {
                final Member self = member(selfId);
                openedServer = ServerSocketChannel.open();
                openedServer.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                openedServer.bind(new InetSocketAddress(self.host(), self.port()));
                openedServer.configureBlocking(false);
                openedServer.register(openedSelector, SelectionKey.OP_ACCEPT);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // A member that cannot listen (its port taken, its host unresolved) leaves no selector or channel open.
            CloseHelper.quietCloseAll(openedServer, openedSelector);
            throw new IllegalStateException("cannot listen on " + (selfId >= 0 ? member(selfId) : "nothing") + ": " +
                (null == ex.getMessage() ? ex.toString() : ex.getMessage()), ex);
        }
        selector = openedSelector;
        server = openedServer;
    }

    public int poll(final long nowNs, final MessageHandler handler)
    {
        this.nowNs = nowNs;
        reader.handler(handler);
        work = 0;
        tls.startPoll();
        for (TcpConnection c; null != (c = tls.nextDeferred()); )
        {
            work++;
            read(c);
        }
        // Only those queued before this poll: one queued again during it (its share of records without data spent)
        // waits for the next.
        for (int queued = readQueue.size(); queued > 0; queued--)
        {
            final TcpConnection c = readQueue.poll();
            c.readQueued = false;
            if (c.open)
            {
                work++;
                read(c);
            }
        }
        connectToMembers();
        if (connections.anyToSweep() && nowNs >= nextSweepNs)
        {
            dropStalledConnections();
        }
        if (selfId < 0 && nowNs >= nextHeartbeatNs)
        {
            sendHeartbeats();
        }
        connectionLog.reportIfOver(nowNs);
        identityLog.reportIfOver(nowNs);
        replacedLog.reportIfOver(nowNs);
        reloadTlsFiles();
        if (!woken.isEmpty())
        {
            woken.drainTo(onReady);
            return work;
        }
        try
        {
            selector.selectNow(onReady);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "select failed: {0}", ex.toString());
        }
        return work;
    }

    /**
     * Wait until a socket is ready or the time is up, without handling anything: the next {@link #poll} handles what
     * this found, without selecting again. For an idle strategy; no allocation.
     *
     * @param timeoutMs longest wait.
     */
    public void awaitReady(final long timeoutMs)
    {
        try
        {
            selector.select(woken, timeoutMs);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "select failed: {0}", ex.toString());
        }
    }

    /**
     * End a wait in {@link #awaitReady} now, or the next one at once if none is running. Any thread.
     */
    public void wakeup()
    {
        selector.wakeup();
    }

    /**
     * @param listener told, besides the log, each reason a connection is refused or dropped.
     * @return this.
     */
    public TcpTransport problemListener(final ProblemListener listener)
    {
        this.problems = listener;
        return this;
    }

    /**
     * @param toolSecret the secret tools prove to this member before it trusts their requests: a different one from
     *                   the member secret, held on the hosts that run tools (before the first poll).
     * @return this.
     */
    public TcpTransport toolSecret(final ClusterSecret toolSecret)
    {
        hello.toolSecret(toolSecret);
        return this;
    }

    /**
     * Encrypt links (before the first poll). A member accepts TLS from any peer once it has files, and requires it of
     * the classes named; it dials the members of those classes with TLS. A client or tool dials every member with
     * TLS if {@code encrypted} is not empty.
     *
     * @param files     a member's must hold a certificate and key ({@link TlsFiles#load}); a client's or tool's may
     *                  only trust ({@link TlsFiles#trusting}).
     * @param encrypted the link classes that must use TLS.
     * @return this.
     */
    public TcpTransport tls(final TlsFiles files, final Set<LinkClass> encrypted)
    {
        if (selfId >= 0 && null != files && !files.hasIdentity())
        {
            throw new IllegalArgumentException("member " + selfId + " needs a TLS certificate and key of its own, " +
                "not only trusted authorities: peers check who it is");
        }
        if (null == files && !encrypted.isEmpty())
        {
            throw new IllegalArgumentException("TLS links " + encrypted + " need TLS files");
        }
        this.tls = new TlsPolicy(files, encrypted);
        reader.tls(tls);
        return this;
    }

    /**
     * @return TLS records without data (key updates) decrypted in the last poll, over every link: at most
     * {@link QuietRecordShare#PER_POLL}, and one more on each link that sends them.
     */
    int tlsQuietRecordsLastPoll()
    {
        return tls.quietRecords();
    }

    /** @return reads of accepted connections in their TLS handshake in the last poll (for tests). */
    int tlsHandshakeReadsLastPoll()
    {
        return tls.handshakeReads();
    }

    /**
     * @return true if the connection to or from this endpoint is encrypted (TLS).
     */
    public boolean isEncrypted(final int endpoint)
    {
        final TcpConnection c = connections.get(endpoint);
        return null != c && null != c.tls;
    }

    private void reloadTlsFiles()
    {
        final String problem = tls.reloadIfChanged(nowNs);
        if (null != problem)
        {
            LOGGER.log(System.Logger.Level.WARNING, (selfId >= 0 ? "member " + selfId + ": " : "") + problem);
            problems.onProblem("tls", problem);
        }
    }

    /**
     * @param limits what connections that are not members may hold (before the first poll).
     * @return this.
     */
    public TcpTransport limits(final ConnectionLimits limits)
    {
        this.limits = limits;
        connections.clientBudget().limit(limits.clientBufferBytes());
        return this;
    }

    /**
     * @return client and tool connections past their Hello.
     */
    public int clientConnections()
    {
        return connections.clients();
    }

    /**
     * @return true for members, and for tool connections that proved the tool secret (every connection when no
     * secret is configured). A connection that is not trusted may only speak the client protocol.
     */
    public boolean isTrusted(final int endpoint)
    {
        if (endpoint >= 0 && endpoint < CLIENT_ENDPOINT_BASE)
        {
            return true;
        }
        final TcpConnection c = connections.get(endpoint);
        return null != c && c.trusted;
    }

    /** A client or tool: a heartbeat on every connection it has not written to for a while. */
    private void sendHeartbeats()
    {
        nextHeartbeatNs = nowNs + SWEEP_INTERVAL_NS * 10;
        for (int i = 0; i < connections.memberSlots(); i++)
        {
            final TcpConnection c = connections.member(i);
            if (null != c && c.connected && nowNs - c.lastSentNs >= HEARTBEAT_INTERVAL_NS &&
                c.enqueue(heartbeat, 0, heartbeat.capacity()))
            {
                c.lastSentNs = nowNs;
            }
        }
    }

    /** Connections silent in their handshake past its timeout, and client connections idle past theirs. */
    private void dropStalledConnections()
    {
        nextSweepNs = nowNs + SWEEP_INTERVAL_NS;
        final List<TcpConnection> all = connections.all();
        for (int i = all.size() - 1; i >= 0; i--)
        {
            final TcpConnection c = all.get(i);
            if (c.handshakeDeadlineNs > 0 && nowNs > c.handshakeDeadlineNs &&
                (TcpConnection.Stage.READY != c.stage || (null != c.tls && !c.tls.handshakeDone())))
            {
                disconnect(c, "no handshake within " + TimeUnit.NANOSECONDS.toMillis(HANDSHAKE_TIMEOUT_NS) + " ms");
            }
            else if (c.endpoint >= CLIENT_ENDPOINT_BASE && nowNs - c.lastHeardNs > limits.clientIdleTimeoutNs())
            {
                disconnect(c, "client connection silent for " + TimeUnit.NANOSECONDS.toMillis(
                    limits.clientIdleTimeoutNs()) + " ms (lockstep.client.idle.timeout.ms)");
            }
        }
    }

    public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        final TcpConnection connection = connections.get(endpoint);
        if (null == connection || !connection.connected)
        {
            return false;
        }
        return connection.enqueue(buffer, offset, length);
    }

    public boolean isConnected(final int endpoint)
    {
        final TcpConnection c = connections.get(endpoint);
        return null != c && c.connected;
    }

    public int flush(final long nowNs)
    {
        int written = 0;
        final List<TcpConnection> all = connections.all();
        for (int i = 0; i < all.size(); i++)
        {
            final TcpConnection c = all.get(i);
            if (c.open && null != c.writeBuffer && (c.writeBuffer.position() > 0 || (null != c.tls &&
                c.tls.wantsFlush())))
            {
                c.writeBuffer.flip();
                try
                {
                    if (null == c.tls)
                    {
                        c.channel.write(c.writeBuffer);
                    }
                    else if (c.tls.write(c.channel, c.writeBuffer) && !c.readQueued)
                    {
                        // Its handshake finished here with records already in: the socket may never say so again.
                        c.readQueued = true;
                        readQueue.add(c);
                    }
                    c.lastSentNs = nowNs;
                    written++;
                }
                catch (final IOException ex)
                {
                    c.writeBuffer.clear();
                    disconnect(c, "write failed: " + ex.getMessage());
                    i--;
                    continue;
                }
                c.writeBuffer.compact();
            }
        }
        return written;
    }

    public void close()
    {
        connections.closeAll();
        CloseHelper.quietClose(server);
        CloseHelper.quietClose(selector);
    }

    private boolean shouldConnect(final Member m)
    {
        // Members connect to higher ids; a tool or driver (selfId -1) connects to every member.
        return selfId < 0 || m.id() > selfId;
    }

    private void connectToMembers()
    {
        for (int i = 0; i < members.length; i++)
        {
            final Member m = members[i];
            if (m.id() == selfId || null != connections.member(m.id()) || !shouldConnect(m) ||
                nowNs < nextConnectNs[m.id()])
            {
                continue;
            }
            try
            {
                final SocketChannel channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final TcpConnection c = new TcpConnection(channel, m.id(), readBufferLength, writeBufferLength);
                c.endpoint = m.id();
                connections.addDialled(m.id(), c);
                if (channel.connect(new InetSocketAddress(m.host(), m.port())))
                {
                    c.key = channel.register(selector, SelectionKey.OP_READ, c);
                    onConnected(c);
                }
                else
                {
                    c.key = channel.register(selector, SelectionKey.OP_CONNECT, c);
                }
                work++;
            }
            catch (final IOException | RuntimeException ex)
            {
                scheduleReconnect(m.id());
                final TcpConnection c = connections.removeDialled(m.id());
                if (null != c)
                {
                    CloseHelper.quietClose(c.channel);
                }
            }
        }
    }

    private void onReady(final SelectionKey key)
    {
        if (!key.isValid())
        {
            // Its connection was closed earlier in this poll (evicted, or replaced by a member's new one).
            return;
        }
        work++;
        if (key.isAcceptable())
        {
            accept();
            return;
        }
        final TcpConnection c = (TcpConnection)key.attachment();
        if (key.isConnectable())
        {
            try
            {
                if (c.channel.finishConnect())
                {
                    key.interestOps(SelectionKey.OP_READ);
                    onConnected(c);
                }
            }
            catch (final IOException ex)
            {
                disconnect(c, null);
            }
            return;
        }
        if (key.isValid() && key.isReadable())
        {
            read(c);
        }
    }

    private void onConnected(final TcpConnection c)
    {
        c.markOpen();
        // The TLS handshake goes first; the Hello queued below waits in the clear, and is sent inside the link.
        try
        {
            c.tls = tls.dial(selfId < 0 ? null : member(selfId), member(c.connectTo));
        }
        catch (final SSLException ex)
        {
            disconnect(c, TlsPolicy.failure(c, ex));
            return;
        }
        if (null != c.tls)
        {
            startHandshake(c);
        }
        c.tlsDecided = true;
        if (hello.sayHello(c))
        {
            c.stage = TcpConnection.Stage.READY;
            c.connected = true;
        }
        else
        {
            c.stage = TcpConnection.Stage.AWAIT_REPLY;
            if (0 == c.handshakeDeadlineNs)
            {
                startHandshake(c);
            }
        }
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} connected to {1}", selfId, c.connectTo);
    }

    private void startHandshake(final TcpConnection c)
    {
        connections.startHandshake(c, nowNs + HANDSHAKE_TIMEOUT_NS);
    }

    private void endHandshake(final TcpConnection c)
    {
        connections.endHandshake(c);
    }

    private void accept()
    {
        try
        {
            SocketChannel channel;
            // Bounded per poll, so that a flood of connects cannot keep the member's thread from everything else.
            for (int accepted = 0; accepted < ACCEPTS_PER_POLL && null != (channel = server.accept()); accepted++)
            {
                final TcpConnection evicted = connections.handshakeSlotsHeld() >= limits.maxHandshakes() ?
                    connections.evictionCandidate() : null;
                if (null != evicted)
                {
                    disconnect(evicted, "evicted: " + limits.maxHandshakes() + " connections were in their handshake");
                }
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final TcpConnection c = new TcpConnection(channel, -1, readBufferLength, writeBufferLength);
                c.markOpenForHandshake(connections.handshakeBuffers());
                c.stage = TcpConnection.Stage.AWAIT_HELLO;
                connections.addAccepted(c, nowNs + HANDSHAKE_TIMEOUT_NS);
                c.key = channel.register(selector, SelectionKey.OP_READ, c);
                // A genuine peer says Hello as soon as it connects: read it now, so that its handshake moves on before
                // the connects queued behind it can crowd it out.
                read(c);
            }
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "accept failed: {0}", ex.toString());
        }
    }

    private void read(final TcpConnection c)
    {
        reader.read(c);
        if (c.open && null != c.tls && c.tls.starved() && !c.readQueued)
        {
            // Stopped at the end of the poll's share of records without data, with records already out of the
            // socket: the selector will not report them again, so the next poll reads on.
            c.readQueued = true;
            readQueue.add(c);
        }
    }

    private boolean onHandshake(final TcpConnection c, final MessageHeaderDecoder header, final int messageOffset)
    {
        final int body = messageOffset + MessageHeaderDecoder.ENCODED_LENGTH;
        switch (hello.onMessage(c, header, body, tls, limits, connections.openClients()))
        {
            case REFUSED:
                disconnect(c, hello.refusal());
                return false;
            case REGISTER:
                return register(c, hello.peerId(), hello.trusted());
            case CONNECTED:
                endHandshake(c);
                c.trusted = true;
                c.connected = true;
                return true;
            default:
                return true;
        }
    }

    /** Accepting side: the handshake is done; the connection becomes a member's or a client's endpoint. */
    private boolean register(final TcpConnection c, final int peerId, final boolean trusted)
    {
        final TcpConnection previous = peerId >= 0 ? connections.member(peerId) : null;
        final String refusal = connections.register(c, peerId, trusted, null != secret, nowNs);
        if (null != refusal)
        {
            disconnect(c, refusal);
            return false;
        }
        if (null != previous && previous != c)
        {
            // The newest connection for an id wins, so that a member whose host crashed, or whose link was cut,
            // gets back at once. Every replacement is named: an honest member's old connection is closed before
            // it dials again, or silent since its link died, so one heard from recently means two peers claim the
            // id. Links between followers carry nothing between elections, so a silent one is named too.
            final long silentMs = TimeUnit.NANOSECONDS.toMillis(nowNs - previous.lastHeardNs);
            final String replaced = "member " + peerId + " connected again from " + remoteOf(c) + " while its " +
                "connection from " + remoteOf(previous) + " was open (last heard " + silentMs + " ms ago)";
            final String reason = nowNs - previous.lastHeardNs < LIVE_MEMBER_NS ?
                replaced + "; the new one is kept. If this repeats, two processes run as member " + peerId +
                    ", or another peer claims its id" :
                replaced + ": taken as a dead link and replaced. If this repeats while the link is up, another " +
                    "peer claims its id";
            // A budget of its own: a flood of unproved claims, which anyone can send, must not hide it.
            replacedLog.log(nowNs, peerId, reason);
            // A kind of its own too: unproved claims, which anyone can send in many shapes, fill "identity", and the
            // error log makes room by dropping the oldest of the fullest kind.
            problems.onProblem("member-replaced", reason);
            disconnect(previous, null);
        }
        return true;
    }

    static String remoteOf(final TcpConnection c)
    {
        try
        {
            final Object address = c.channel.getRemoteAddress();
            return null == address ? "an unknown address" : address.toString();
        }
        catch (final IOException ex)
        {
            return "an unknown address";
        }
    }

    private void disconnect(final TcpConnection c, final String reason)
    {
        if (null != reason)
        {
            final boolean identity = c.claimedIdentity || c.connectTo >= 0;
            // An accepted connection is named by where it came from: the one thing an operator can act on (a
            // firewall, the host of a misconfigured peer). Its digits vary, so tool errors still counts one shape.
            final String from = c.connectTo < 0 ? remoteOf(c) : null;
            final String said = null == from || reason.contains(from) ? reason : reason + " (from " + from + ")";
            (identity ? identityLog : connectionLog).log(nowNs, c.endpoint >= 0 ? c.endpoint : "unidentified peer",
                said);
            problems.onProblem(identity ? "identity" : "connection", said);
        }
        c.open = false;
        c.connected = false;
        if (null != c.key)
        {
            c.key.cancel();
        }
        CloseHelper.quietClose(c.channel);
        connections.remove(c);
        tls.forget(c);
        if (c.connectTo >= 0)
        {
            scheduleReconnect(c.connectTo);
        }
    }

    private void scheduleReconnect(final int memberId)
    {
        nextConnectNs[memberId] = nowNs + backoffNs[memberId];
        backoffNs[memberId] = Math.min(MAX_BACKOFF_NS, backoffNs[memberId] * 2);
    }

    /** Whole messages came from a connection: a client is alive; a member dialled has answered. */
    private void heard(final TcpConnection c)
    {
        c.lastHeardNs = nowNs; // a client's idle bound; a member's, to say how long ago it spoke when replaced
        if (!c.heardFrom)
        {
            c.heardFrom = true;
            if (c.connectTo >= 0)
            {
                // Only now: a member that takes the socket and then refuses this side is retried with a growing
                // backoff, not every 10 ms.
                backoffNs[c.connectTo] = MIN_BACKOFF_NS;
            }
        }
    }

    /** The reader's view of this transport, kept off the public class. */
    private final class ReaderOwner implements ConnectionReader.Owner
    {
        public void disconnect(final TcpConnection c, final String reason)
        {
            TcpTransport.this.disconnect(c, reason);
        }

        public void endHandshake(final TcpConnection c)
        {
            TcpTransport.this.endHandshake(c);
        }

        public boolean onHandshake(final TcpConnection c, final MessageHeaderDecoder header, final int messageOffset)
        {
            return TcpTransport.this.onHandshake(c, header, messageOffset);
        }

        public void heard(final TcpConnection c)
        {
            TcpTransport.this.heard(c);
        }

        public long clientBytesInUse()
        {
            return connections.clientBudget().used();
        }
    }

    private Member member(final int id)
    {
        for (int i = 0; i < members.length; i++)
        {
            if (members[i].id() == id)
            {
                return members[i];
            }
        }
        return null;
    }
}
