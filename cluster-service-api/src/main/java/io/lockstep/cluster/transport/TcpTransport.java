package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HeartbeatDecoder;
import io.lockstep.cluster.codecs.HeartbeatEncoder;
import io.lockstep.cluster.codecs.HelloDecoder;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofDecoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.HelloReplyDecoder;
import io.lockstep.cluster.codecs.HelloReplyEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
    /** Small buffers kept for the next accepted connection: enough for every handshake in flight at the bound. */
    private static final int POOLED_HANDSHAKE_BUFFERS = 2 * 64;
    private static final long SWEEP_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int ACCEPTS_PER_POLL = 16;
    /** Connections that proved the tool secret, beside the client bound: an operator can always get in. */
    private static final int MAX_TOOL_CONNECTIONS = 32;
    /**
     * A client or tool writes at least this often on every connection, a heartbeat where it has nothing else to
     * say: well inside the shortest idle limit a member's configuration accepts (10 s).
     */
    static final long HEARTBEAT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(3);

    private final int selfId;
    /** The one check every message passes before a decoder reads it. */
    private final FrameValidator validator;
    /** An array, not a List: iterating a List each duty cycle allocates an iterator. */
    private final Member[] members;
    private final int segmentLength;
    private final int maxMessageLength;
    private final int writeBufferLength;
    private final int readBufferLength;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final TcpConnection[] memberConnections;
    private final long[] nextConnectNs;
    private final long[] backoffNs;
    private final Int2ObjectHashMap<TcpConnection> clientConnections = new Int2ObjectHashMap<>();
    private final List<TcpConnection> all = new ArrayList<>();
    private final UnsafeBuffer helloBuffer = new UnsafeBuffer(new byte[128]);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final HelloDecoder helloDecoder = new HelloDecoder();
    private final HelloReplyDecoder replyDecoder = new HelloReplyDecoder();
    private final HelloProofDecoder proofDecoder = new HelloProofDecoder();
    /** Null: no member authentication (every connection is trusted, as the start-up warning says). */
    private final ClusterSecret secret;
    /** What tools prove to this member; null: no tool is trusted (unless the cluster runs without secrets). */
    private ClusterSecret toolSecret;
    private final SecureRandom random;
    private ProblemListener problems = problem -> { };
    private final HandshakeBuffers handshakeBuffers = new HandshakeBuffers(POOLED_HANDSHAKE_BUFFERS);
    private ConnectionLimits limits = ConnectionLimits.DEFAULTS;
    private final BufferBudget clientBudget = new BufferBudget(ConnectionLimits.DEFAULTS.clientBufferBytes());
    private int handshakesPending;
    /** Accepted connections still in their handshake (dialled ones are this member's own, and bounded by ids). */
    private int handshakeSlotsHeld;
    private int toolConnections;
    private long nextSweepNs;
    private long nextHeartbeatNs;
    /** A log budget per kind of problem: a flood of one leaves the other's lines. */
    private final DroppedConnectionLog connectionLog;
    private final DroppedConnectionLog identityLog;
    private final UnsafeBuffer heartbeat = new UnsafeBuffer(new byte[MessageHeaderEncoder.ENCODED_LENGTH]);
    private final Consumer<SelectionKey> onReady = this::onReady;
    /** What the last idle wait found ready: the next poll handles it instead of selecting. */
    private final ReadyKeys woken;
    private TlsPolicy tls = new TlsPolicy(null, EnumSet.noneOf(LinkClass.class));
    /** TLS connections with records read but not yet decrypted, and no socket readiness left to announce them. */
    private final ArrayDeque<TcpConnection> readQueue = new ArrayDeque<>();
    private MessageHandler handler;
    private long nowNs;
    private int nextClientEndpoint = CLIENT_ENDPOINT_BASE;
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
        this.secret = secret;
        this.random = new SecureRandom();
        this.validator = new FrameValidator(shapes);
        new HeartbeatEncoder().wrapAndApplyHeader(heartbeat, 0, new MessageHeaderEncoder());
        this.members = members.toArray(new Member[0]);
        this.segmentLength = segmentLength;
        this.maxMessageLength = maxMessageLength;
        this.writeBufferLength = 4 * (maxMessageLength + LENGTH_PREFIX);
        this.readBufferLength = BitUtil.findNextPositivePowerOfTwo(maxMessageLength + LENGTH_PREFIX) * 2;
        int maxId = 0;
        for (final Member m : members)
        {
            maxId = Math.max(maxId, m.id());
        }
        woken = new ReadyKeys(this.members.length + ConnectionLimits.DEFAULTS.maxClients() + 1);
        memberConnections = new TcpConnection[maxId + 1];
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
        this.handler = handler;
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
        if ((handshakesPending > 0 || !clientConnections.isEmpty()) && nowNs >= nextSweepNs)
        {
            dropStalledConnections();
        }
        if (selfId < 0 && nowNs >= nextHeartbeatNs)
        {
            sendHeartbeats();
        }
        connectionLog.reportIfOver(nowNs);
        identityLog.reportIfOver(nowNs);
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
        this.toolSecret = toolSecret;
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
        final TcpConnection c = connection(endpoint);
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
        clientBudget.limit(limits.clientBufferBytes());
        return this;
    }

    /**
     * @return client and tool connections past their Hello.
     */
    public int clientConnections()
    {
        return clientConnections.size();
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
        final TcpConnection c = clientConnections.get(endpoint);
        return null != c && c.trusted;
    }

    /**
     * Connections accepted but silent past this are dropped, so that a flood of idle connects cannot use up the
     * client slots.
     */
    private static final long HANDSHAKE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    /** A client or tool: a heartbeat on every connection it has not written to for a while. */
    private void sendHeartbeats()
    {
        nextHeartbeatNs = nowNs + SWEEP_INTERVAL_NS * 10;
        for (int i = 0; i < memberConnections.length; i++)
        {
            final TcpConnection c = memberConnections[i];
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

    /** @return the connection of a member's id or a client's endpoint, or null. */
    private TcpConnection connection(final int endpoint)
    {
        return endpoint < CLIENT_ENDPOINT_BASE ?
            (endpoint >= 0 && endpoint < memberConnections.length ? memberConnections[endpoint] : null) :
            clientConnections.get(endpoint);
    }

    public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        final TcpConnection connection = connection(endpoint);
        if (null == connection || !connection.connected)
        {
            return false;
        }
        return connection.enqueue(buffer, offset, length);
    }

    public boolean isConnected(final int endpoint)
    {
        final TcpConnection c = connection(endpoint);
        return null != c && c.connected;
    }

    public int flush(final long nowNs)
    {
        int written = 0;
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
        for (final TcpConnection c : new ArrayList<>(all))
        {
            CloseHelper.quietClose(c.channel);
        }
        all.clear();
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
            if (m.id() == selfId || null != memberConnections[m.id()] || !shouldConnect(m) ||
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
                memberConnections[m.id()] = c;
                all.add(c);
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
                if (null != memberConnections[m.id()])
                {
                    final TcpConnection c = memberConnections[m.id()];
                    memberConnections[m.id()] = null;
                    all.remove(c);
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
        c.localNonce = nonce();
        final HelloEncoder hello = new HelloEncoder()
            .wrapAndApplyHeader(helloBuffer, 0, headerEncoder)
            .memberId(selfId)
            .segmentLength(segmentLength)
            .authenticate(null != secret ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(c.localNonce, 0, ClusterSecret.NONCE_LENGTH);
        c.enqueue(helloBuffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + hello.encodedLength());
        if (null == secret)
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

    private byte[] nonce()
    {
        final byte[] nonce = new byte[ClusterSecret.NONCE_LENGTH];
        random.nextBytes(nonce);
        return nonce;
    }

    private void startHandshake(final TcpConnection c)
    {
        c.handshakeDeadlineNs = nowNs + HANDSHAKE_TIMEOUT_NS;
        handshakesPending++;
    }

    private void endHandshake(final TcpConnection c)
    {
        if (c.handshakeDeadlineNs > 0)
        {
            c.handshakeDeadlineNs = 0;
            handshakesPending--;
        }
        if (c.holdsHandshakeSlot)
        {
            c.holdsHandshakeSlot = false;
            handshakeSlotsHeld--;
        }
        c.stage = TcpConnection.Stage.READY;
    }

    private void accept()
    {
        try
        {
            SocketChannel channel;
            // Bounded per poll, so that a flood of connects cannot keep the member's thread from everything else.
            for (int accepted = 0; accepted < ACCEPTS_PER_POLL && null != (channel = server.accept()); accepted++)
            {
                if (handshakeSlotsHeld >= limits.maxHandshakes())
                {
                    evictOldestHandshake();
                }
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final TcpConnection c = new TcpConnection(channel, -1, readBufferLength, writeBufferLength);
                c.markOpenForHandshake(handshakeBuffers);
                c.stage = TcpConnection.Stage.AWAIT_HELLO;
                startHandshake(c);
                c.holdsHandshakeSlot = true;
                handshakeSlotsHeld++;
                c.key = channel.register(selector, SelectionKey.OP_READ, c);
                all.add(c);
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

    /**
     * Make room for one more accepted connection by closing the oldest silent one (no Hello, and nothing the TLS
     * engine could act on: see {@link #isSilent}), or if none is silent, the one longest in its handshake. A peer that
     * says Hello at once, as members, tools and clients do, is past this stage before the silent ones queued around it:
     * refusing new connections instead would lock out a reconnecting member for as long as a flood lasts.
     */
    private void evictOldestHandshake()
    {
        TcpConnection oldest = null;
        for (int i = 0; i < all.size(); i++)
        {
            final TcpConnection c = all.get(i);
            if (c.holdsHandshakeSlot && (null == oldest || (isSilent(c) != isSilent(oldest) ? isSilent(c) :
                c.handshakeDeadlineNs < oldest.handshakeDeadlineNs)))
            {
                oldest = c;
            }
        }
        if (null != oldest)
        {
            disconnect(oldest, "evicted: " + limits.maxHandshakes() + " connections were in their handshake");
        }
    }

    /**
     * Accepted and has said nothing the member could act on: no Hello, and no whole TLS handshake message (see
     * {@link TlsLink#spoke}). A connection whose handshake moved on, or whose whole record waits for this member's
     * share of handshake work, has spoken and is not evicted before these; one that sent only part of a record, or a
     * record holding part of a ClientHello, has not (a flood of those would otherwise keep a restarting member's
     * connection the oldest that spoke, and evict it).
     */
    private static boolean isSilent(final TcpConnection c)
    {
        return TcpConnection.Stage.AWAIT_HELLO == c.stage && (null == c.tls || !c.tls.spoke());
    }

    private void read(final TcpConnection c)
    {
        readAvailable(c);
        if (c.open && null != c.tls && c.tls.starved() && !c.readQueued)
        {
            // Stopped at the end of the poll's share of records without data, with records already out of the
            // socket: the selector will not report them again, so the next poll reads on.
            c.readQueued = true;
            readQueue.add(c);
        }
    }

    private void readAvailable(final TcpConnection c)
    {
        if (c.connectTo < 0 && null != c.tls && !c.tls.handshakeDone() && !mayWorkOnHandshake(c))
        {
            return;
        }
        boolean fromSocket = true;
        do
        {
            final int read;
            try
            {
                read = fill(c, fromSocket);
            }
            catch (final IOException ex)
            {
                disconnect(c, ex instanceof SSLException ? TlsPolicy.failure(c, ex) : null);
                return;
            }
            if (read < 0)
            {
                disconnect(c, closedReason(c));
                return;
            }
            if (null != c.tls && c.connectTo >= 0 && c.handshakeDeadlineNs > 0 &&
                TcpConnection.Stage.READY == c.stage && c.tls.handshakeDone())
            {
                // Dialled without a secret: the TLS handshake was all the handshake there is.
                endHandshake(c);
            }
            if (!c.open || c.tlsDeferred || (0 == read && !fromSocket))
            {
                // Closed; or waiting for its share of handshake work; or nothing more to decrypt for now.
                return;
            }
            fromSocket = false;
        }
        // A TLS link may hold decrypted bytes the read buffer had no room for: read on once frames made room, up to
        // the poll's share of records without data.
        while (readFrames(c) && null != c.tls && c.tls.hasBuffered() && c.readBuffer.hasRemaining() &&
            !c.tls.starved());
    }

    /**
     * An accepted connection in its TLS handshake: take what the socket has, and spend one of this poll's handshake
     * reads on it only once a whole record is there. A peer that sends a record a byte at a time costs no share,
     * and, holding no whole record, stays among the first to be evicted ({@link #isSilent}).
     *
     * @return true if the engine may work on the connection now.
     */
    private boolean mayWorkOnHandshake(final TcpConnection c)
    {
        try
        {
            if (c.tls.readSocket(c.channel) < 0)
            {
                disconnect(c, closedReason(c));
                return false;
            }
        }
        catch (final IOException ex)
        {
            disconnect(c, null);
            return false;
        }
        return c.tls.holdsWholeRecord() && tls.takeHandshakeRead(c);
    }

    /**
     * Why the peer closed, where it says something: in the middle of a message, in the TLS handshake, or, for a member
     * this side dialled, before it answered anything (it refused this side: its own log says why).
     */
    private static String closedReason(final TcpConnection c)
    {
        if (c.readBuffer.position() > 0)
        {
            return "connection closed in the middle of a message";
        }
        if (null != c.tls && !c.tls.handshakeDone())
        {
            return TlsPolicy.failure(c, null);
        }
        if (c.connectTo >= 0 && !c.heardFrom)
        {
            return "member " + c.connectTo + " closed the connection before answering: it refused this side (its " +
                "log and tool errors say why: TLS required (lockstep.tls.links), a wrong secret, a bound) or is " +
                "stopping";
        }
        return null;
    }

    /**
     * Plain bytes into the read buffer: from the socket, or, on a TLS link, decrypted from the records it sent.
     *
     * @param fromSocket false: only what a TLS link already holds.
     * @return the bytes added, or -1 at the end of the stream.
     */
    private int fill(final TcpConnection c, final boolean fromSocket) throws IOException
    {
        if (null != c.tls)
        {
            return fromSocket ? c.tls.read(c.channel, c.readBuffer) : c.tls.decrypt(c.channel, c.readBuffer);
        }
        if (!fromSocket)
        {
            return 0;
        }
        final int read = c.channel.read(c.readBuffer);
        return read > 0 && !c.tlsDecided ? detectTls(c, read) : read;
    }

    /** An accepted connection's first bytes: TLS or the clear (see {@link TlsPolicy#classify}). */
    private int detectTls(final TcpConnection c, final int read) throws IOException
    {
        final TlsPolicy.FirstBytes first = TlsPolicy.classify(c.readView, c.readBuffer.position());
        if (TlsPolicy.FirstBytes.UNDECIDED == first)
        {
            return read;
        }
        c.tlsDecided = true;
        if (TlsPolicy.FirstBytes.CLEAR == first)
        {
            return read;
        }
        c.tls = tls.accept();
        if (null == c.tls)
        {
            disconnect(c, TlsPolicy.noFilesReason());
            return 0;
        }
        c.readBuffer.flip();
        c.tls.takeFirstBytes(c.readBuffer);
        c.readBuffer.clear();
        return c.tls.holdsWholeRecord() && tls.takeHandshakeRead(c) ? c.tls.decrypt(c.channel, c.readBuffer) : 0;
    }

    /**
     * Deliver every whole frame in the read buffer, and keep the rest.
     *
     * @return false if the connection was closed.
     */
    private boolean readFrames(final TcpConnection c)
    {
        int offset = 0;
        final int limit = c.readBuffer.position();
        while (limit - offset >= LENGTH_PREFIX)
        {
            final int length = c.readView.getInt(offset, ByteOrder.LITTLE_ENDIAN);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH || length > maxMessageLength)
            {
                disconnect(c, "bad message length " + length);
                return false;
            }
            final boolean handshaking = TcpConnection.Stage.READY != c.stage;
            if (handshaking && length > TcpConnection.MAX_HANDSHAKE_MESSAGE_LENGTH)
            {
                // Only a handshake message may come next, and they are small: a longer frame is garbage, and
                // waiting for it would hold a connection on a buffer it can never fill.
                disconnect(c, "a message of " + length + " bytes during the handshake, where only handshake " +
                    "messages (at most " + TcpConnection.MAX_HANDSHAKE_MESSAGE_LENGTH + " bytes) may come");
                return false;
            }
            if (limit - offset - LENGTH_PREFIX < length)
            {
                break;
            }
            final int messageOffset = offset + LENGTH_PREFIX;
            offset = messageOffset + length;
            if (!validator.isValid(c.readView, messageOffset, length))
            {
                disconnect(c, validator.reason());
                return false;
            }
            headerDecoder.wrap(c.readView, messageOffset);
            if (!deliver(c, messageOffset, length, handshaking))
            {
                return false;
            }
        }
        if (offset > 0 && c.endpoint >= CLIENT_ENDPOINT_BASE)
        {
            c.lastHeardNs = nowNs;
        }
        if (offset > 0 && !c.heardFrom)
        {
            c.heardFrom = true;
            if (c.connectTo >= 0)
            {
                // Only now: a member that takes the socket and then refuses this side is retried with a growing
                // backoff, not every 10 ms.
                backoffNs[c.connectTo] = MIN_BACKOFF_NS;
            }
        }
        c.readBuffer.limit(limit).position(offset);
        c.readBuffer.compact();
        if (TcpConnection.Stage.READY == c.stage && !c.readBuffer.hasRemaining() && !c.growReadBufferForMore())
        {
            // Full, with a frame still coming: it did not fit the budget for clients' buffers, or the JVM's memory.
            disconnect(c, "a frame of " + c.readView.getInt(0, ByteOrder.LITTLE_ENDIAN) + " bytes does not fit " +
                "the buffers left for clients (" + clientBudget.used() + " bytes in use; " +
                "lockstep.client.buffers.max.bytes)");
            return false;
        }
        return true;
    }

    /**
     * One message that passed the {@link FrameValidator}, to the handshake or to the handler. A decoder that still
     * throws (an enum value the schema does not have, say) closes this connection only: the message was at fault,
     * not the member. Anything else thrown is the member's own failure and goes on up.
     *
     * @return false if the connection was closed and nothing more of it may be read.
     */
    private boolean deliver(final TcpConnection c, final int messageOffset, final int length, final boolean handshaking)
    {
        try
        {
            if (handshaking)
            {
                return onHandshake(c, messageOffset);
            }
            if (isHandshake())
            {
                disconnect(c, "a handshake message (template " + headerDecoder.templateId() + ") after the " +
                    "handshake");
                return false;
            }
            if (HeartbeatDecoder.TEMPLATE_ID == headerDecoder.templateId() &&
                HeartbeatDecoder.SCHEMA_ID == headerDecoder.schemaId())
            {
                // Only a sign of life: the read pass already counted it.
                return true;
            }
            handler.onMessage(c.endpoint, c.readView, messageOffset, length);
            return c.channel.isOpen();
        }
        catch (final RuntimeException ex)
        {
            if (!DecoderFaults.isDecoderFault(ex, validator.shapes()))
            {
                throw ex;
            }
            disconnect(c, "could not decode template " + c.readView.getShort(messageOffset + 2,
                ByteOrder.LITTLE_ENDIAN) + " of schema " + c.readView.getShort(messageOffset + 4,
                ByteOrder.LITTLE_ENDIAN) + ": " + ex);
            return false;
        }
    }

    private boolean onHandshake(final TcpConnection c, final int messageOffset)
    {
        final int body = messageOffset + MessageHeaderDecoder.ENCODED_LENGTH;
        final int templateId = isHandshake() ? headerDecoder.templateId() : -1;
        switch (c.stage)
        {
            case AWAIT_HELLO:
                if (HelloDecoder.TEMPLATE_ID == templateId)
                {
                    helloDecoder.wrap(c.readView, body, headerDecoder.blockLength(), headerDecoder.version());
                    return onHello(c);
                }
                break;
            case AWAIT_PROOF:
                if (HelloProofDecoder.TEMPLATE_ID == templateId)
                {
                    proofDecoder.wrap(c.readView, body, headerDecoder.blockLength(), headerDecoder.version());
                    return onProof(c);
                }
                break;
            case AWAIT_REPLY:
                if (HelloReplyDecoder.TEMPLATE_ID == templateId)
                {
                    replyDecoder.wrap(c.readView, body, headerDecoder.blockLength(), headerDecoder.version());
                    return onReply(c);
                }
                break;
            default:
                break;
        }
        disconnect(c, "expected " + expected(c.stage) + " but got template " + headerDecoder.templateId() +
            " of schema " + headerDecoder.schemaId());
        return false;
    }

    private static String expected(final TcpConnection.Stage stage)
    {
        return switch (stage)
        {
            case AWAIT_HELLO -> "Hello first";
            case AWAIT_PROOF -> "HelloProof";
            case AWAIT_REPLY -> "HelloReply";
            default -> "nothing";
        };
    }

    /** Accepting side: who is speaking, and whether they will prove the secret. */
    // Longer than the method bound: the checks a Hello meets, in order: a reviewer reads the whole gate at once.
    @SuppressWarnings("checkstyle:MethodLength")
    private boolean onHello(final TcpConnection c)
    {
        final int peerId = helloDecoder.memberId();
        // Raw values: a peer speaking garbage must not make the decoder throw.
        final boolean authenticating = BooleanFlag.TRUE.value() == helloDecoder.authenticateRaw();
        c.claimedIdentity = peerId >= 0 || authenticating;
        if (peerId >= 0)
        {
            if (null == member(peerId) || peerId == selfId)
            {
                disconnect(c, "Hello from member id " + peerId + ", which is not a configured peer");
                return false;
            }
            final String tlsRefusal = tls.memberRefusal(c, member(selfId), member(peerId));
            if (null != tlsRefusal)
            {
                disconnect(c, tlsRefusal);
                return false;
            }
            if (helloDecoder.segmentLength() != segmentLength)
            {
                disconnect(c, "member " + peerId + " uses log segment length " + helloDecoder.segmentLength() +
                    ", this member " + segmentLength + ": positions would disagree");
                return false;
            }
            if (null != secret && !authenticating)
            {
                disconnect(c, "refused a connection claiming to be member " + peerId + ": it did not offer to " +
                    "prove the member secret, which this member requires (lockstep.cluster.secret.file)");
                return false;
            }
        }
        else if (null != tls.clientRefusal(c, authenticating))
        {
            disconnect(c, tls.clientRefusal(c, authenticating));
            return false;
        }
        else if (!authenticating && clientConnections.size() - toolConnections >= limits.maxClients())
        {
            // Tools have slots of their own, taken once they proved the tool secret: clients cannot crowd them out.
            disconnect(c, "refused a client connection: " + limits.maxClients() + " are open " +
                "(lockstep.client.connections.max)");
            return false;
        }
        if (!authenticating)
        {
            return register(c, peerId, null == secret);
        }
        // A member proves the member secret; a tool the tool secret, which cannot make it a member.
        final ClusterSecret expected = peerId >= 0 ? secret : toolSecret;
        if (null != secret && null == expected)
        {
            disconnect(c, "refused to trust a tool: this member has no tool secret configured " +
                "(lockstep.tool.secret.file), so no tool can be trusted");
            return false;
        }
        c.handshakeSecret = expected;
        c.claimedId = peerId;
        c.peerNonce = new byte[ClusterSecret.NONCE_LENGTH];
        helloDecoder.getNonce(c.peerNonce, 0, ClusterSecret.NONCE_LENGTH);
        c.localNonce = nonce();
        final HelloReplyEncoder reply = new HelloReplyEncoder()
            .wrapAndApplyHeader(helloBuffer, 0, headerEncoder)
            .memberId(selfId)
            .authenticate(null != secret ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(c.localNonce, 0, ClusterSecret.NONCE_LENGTH)
            .putProof(null == expected ? new byte[ClusterSecret.PROOF_LENGTH] : expected.proof(
                ClusterSecret.Role.ACCEPTOR, c.peerNonce, c.localNonce, peerId, selfId), 0, ClusterSecret.PROOF_LENGTH);
        c.enqueue(helloBuffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + reply.encodedLength());
        if (null == secret)
        {
            // The peer will hang up on learning this member has no secret; if it does not, it is an open cluster.
            return register(c, peerId, true);
        }
        c.stage = TcpConnection.Stage.AWAIT_PROOF;
        return true;
    }

    /** Accepting side: the connector's proof, after it checked this member's. */
    private boolean onProof(final TcpConnection c)
    {
        final byte[] proof = new byte[ClusterSecret.PROOF_LENGTH];
        proofDecoder.getProof(proof, 0, ClusterSecret.PROOF_LENGTH);
        if (!c.handshakeSecret.verify(proof, ClusterSecret.Role.CONNECTOR, c.peerNonce, c.localNonce, c.claimedId,
            selfId))
        {
            disconnect(c, c.claimedId >= 0 ? "refused a connection claiming to be member " + c.claimedId + ": wrong " +
                "proof of the member secret (another cluster's, a tool's, or not a member)" : "refused to trust a " +
                "tool: wrong proof of the tool secret (lockstep.tool.secret.file)");
            return false;
        }
        return register(c, c.claimedId, true);
    }

    /** Connecting side: the member proves itself first; then this side does. */
    private boolean onReply(final TcpConnection c)
    {
        if (replyDecoder.memberId() != c.connectTo)
        {
            disconnect(c, "dialled member " + c.connectTo + " but member " + replyDecoder.memberId() + " answered");
            return false;
        }
        if (BooleanFlag.TRUE.value() != replyDecoder.authenticateRaw())
        {
            disconnect(c, "member " + c.connectTo + " has no secret configured but this side has one: give every " +
                "member the same lockstep.cluster.secret.file, and every member and tool host the same " +
                "lockstep.tool.secret.file");
            return false;
        }
        final byte[] peerNonce = new byte[ClusterSecret.NONCE_LENGTH];
        replyDecoder.getNonce(peerNonce, 0, ClusterSecret.NONCE_LENGTH);
        final byte[] proof = new byte[ClusterSecret.PROOF_LENGTH];
        replyDecoder.getProof(proof, 0, ClusterSecret.PROOF_LENGTH);
        if (!secret.verify(proof, ClusterSecret.Role.ACCEPTOR, c.localNonce, peerNonce, selfId, c.connectTo))
        {
            disconnect(c, "member " + c.connectTo + " failed to prove the " + (selfId >= 0 ? "member" : "tool") +
                " secret (a different secret, or " +
                "not a member of this cluster)");
            return false;
        }
        final HelloProofEncoder answer = new HelloProofEncoder()
            .wrapAndApplyHeader(helloBuffer, 0, headerEncoder)
            .putProof(secret.proof(ClusterSecret.Role.CONNECTOR, c.localNonce, peerNonce, selfId, c.connectTo), 0,
                ClusterSecret.PROOF_LENGTH);
        c.enqueue(helloBuffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + answer.encodedLength());
        endHandshake(c);
        c.trusted = true;
        c.connected = true;
        return true;
    }

    /** Accepting side: the handshake is done; the connection becomes a member's or a client's endpoint. */
    private boolean register(final TcpConnection c, final int peerId, final boolean trusted)
    {
        endHandshake(c);
        c.trusted = trusted;
        c.connected = true;
        if (peerId < 0)
        {
            if (trusted && null != secret)
            {
                if (toolConnections >= MAX_TOOL_CONNECTIONS)
                {
                    disconnect(c, "refused a tool connection: " + MAX_TOOL_CONNECTIONS + " are open");
                    return false;
                }
                c.tool = true;
                toolConnections++;
            }
            c.budget = clientBudget;
            c.endpoint = nextClientEndpoint++;
            c.lastHeardNs = nowNs;
            clientConnections.put(c.endpoint, c);
            return true;
        }
        c.growWriteBufferToFull();
        c.growReadBufferToFull();
        final TcpConnection previous = memberConnections[peerId];
        if (null != previous && previous != c)
        {
            // The peer reconnected (it restarted, or saw the old connection die first): the new one wins.
            disconnect(previous, null);
        }
        c.endpoint = peerId;
        memberConnections[peerId] = c;
        return true;
    }

    /** Template ids are per schema: the handshake is templates 10-12 of the client protocol, and nothing else. */
    private boolean isHandshake()
    {
        final int templateId = headerDecoder.templateId();
        return headerDecoder.schemaId() == HelloDecoder.SCHEMA_ID && (templateId == HelloDecoder.TEMPLATE_ID ||
            templateId == HelloReplyDecoder.TEMPLATE_ID || templateId == HelloProofDecoder.TEMPLATE_ID);
    }

    private void disconnect(final TcpConnection c, final String reason)
    {
        if (null != reason)
        {
            final boolean identity = c.claimedIdentity || c.connectTo >= 0;
            (identity ? identityLog : connectionLog).log(nowNs, c.endpoint >= 0 ? c.endpoint : "unidentified peer",
                reason);
            problems.onProblem(identity ? "identity" : "connection", reason);
        }
        if (c.handshakeDeadlineNs > 0)
        {
            c.handshakeDeadlineNs = 0;
            handshakesPending--;
        }
        if (c.holdsHandshakeSlot)
        {
            c.holdsHandshakeSlot = false;
            handshakeSlotsHeld--;
        }
        c.open = false;
        c.connected = false;
        if (null != c.key)
        {
            c.key.cancel();
        }
        CloseHelper.quietClose(c.channel);
        if (c.connectTo < 0)
        {
            c.releaseBudget();
            c.releaseBuffers(handshakeBuffers);
        }
        all.remove(c);
        tls.forget(c);
        if (c.endpoint >= CLIENT_ENDPOINT_BASE)
        {
            clientConnections.remove(c.endpoint);
            if (c.tool)
            {
                toolConnections--;
            }
        }
        else if (c.endpoint >= 0 && memberConnections[c.endpoint] == c)
        {
            memberConnections[c.endpoint] = null;
        }
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
