package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.HelloDecoder;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Non-blocking TCP between members, and from tools and drivers (selfId -1: connects to every member, listens on
 * nothing). One connection per member pair: the member with
 * the lower id connects, retrying with a backoff from 10 ms doubling to 1 s. Each message travels as an int32
 * length (little-endian) followed by an SBE message of a schema the owner accepts (the client protocol always); the first message on a connection is {@code Hello}, which
 * says who is speaking. Writes are queued in a bounded buffer per connection and written on {@link #flush}: one
 * write per connection per duty cycle. A peer that sends garbage (a bad length, another schema, a newer version, a
 * first message that is not Hello, a member id not configured, a different log segment length) is disconnected
 * with the reason logged, and the member carries on.
 */
public final class TcpTransport implements Transport
{
    private static final System.Logger LOGGER = System.getLogger(TcpTransport.class.getName());
    private static final int LENGTH_PREFIX = Integer.BYTES;
    private static final long MIN_BACKOFF_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_BACKOFF_NS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_CLIENTS = 256;

    private final class Connection
    {
        final SocketChannel channel;
        final int connectTo;
        ByteBuffer readBuffer;
        UnsafeBuffer readView;
        ByteBuffer writeBuffer;
        UnsafeBuffer writeView;
        SelectionKey key;
        int endpoint = -1;
        boolean connected;

        Connection(final SocketChannel channel, final int connectTo)
        {
            this.channel = channel;
            this.connectTo = connectTo;
        }

        /**
         * Buffers are allocated once connected, not per attempt: retrying a dead peer every backoff interval
         * must stay cheap.
         */
        void markConnected()
        {
            if (null == readBuffer)
            {
                readBuffer = BufferUtil.allocateDirectAligned(
                    BitUtil.findNextPositivePowerOfTwo(maxMessageLength + LENGTH_PREFIX) * 2, 64);
                readView = new UnsafeBuffer(readBuffer);
                writeBuffer = BufferUtil.allocateDirectAligned(writeBufferLength, 64);
                writeView = new UnsafeBuffer(writeBuffer);
            }
            connected = true;
        }
    }

    private final int selfId;
    /** Schema id to the newest version this side reads; anything else is garbage. */
    private final Int2IntHashMap acceptedSchemas = new Int2IntHashMap(-1);
    /** An array, not a List: iterating a List each duty cycle allocates an iterator. */
    private final Member[] members;
    private final int segmentLength;
    private final int maxMessageLength;
    private final int writeBufferLength;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final Connection[] memberConnections;
    private final long[] nextConnectNs;
    private final long[] backoffNs;
    private final Int2ObjectHashMap<Connection> clientConnections = new Int2ObjectHashMap<>();
    private final List<Connection> all = new ArrayList<>();
    private final UnsafeBuffer helloBuffer = new UnsafeBuffer(new byte[64]);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final HelloDecoder helloDecoder = new HelloDecoder();
    private final Consumer<SelectionKey> onReady = this::onReady;
    private MessageHandler handler;
    private long nowNs;
    private int nextClientEndpoint = CLIENT_ENDPOINT_BASE;
    private int work;

    /**
     * @param selfId           this member's id, or -1 for a tool or driver (which listens on nothing).
     * @param members          every member.
     * @param segmentLength    this member's log segment length (checked against every peer's).
     * @param maxMessageLength bound on one message; longer is garbage.
     * @param acceptedSchemas  SBE schema ids this side reads, each with the newest version it reads, as pairs
     *                         {id, version, id, version, ...}; the client protocol (Hello included) always is.
     */
    public TcpTransport(
        final int selfId,
        final List<Member> members,
        final int segmentLength,
        final int maxMessageLength,
        final int... acceptedSchemas)
    {
        this.selfId = selfId;
        this.acceptedSchemas.put(MessageHeaderDecoder.SCHEMA_ID, MessageHeaderDecoder.SCHEMA_VERSION);
        for (int i = 0; i + 1 < acceptedSchemas.length; i += 2)
        {
            this.acceptedSchemas.put(acceptedSchemas[i], acceptedSchemas[i + 1]);
        }
        this.members = members.toArray(new Member[0]);
        this.segmentLength = segmentLength;
        this.maxMessageLength = maxMessageLength;
        this.writeBufferLength = 4 * (maxMessageLength + LENGTH_PREFIX);
        int maxId = 0;
        for (final Member m : members)
        {
            maxId = Math.max(maxId, m.id());
        }
        memberConnections = new Connection[maxId + 1];
        nextConnectNs = new long[maxId + 1];
        backoffNs = new long[maxId + 1];
        java.util.Arrays.fill(backoffNs, MIN_BACKOFF_NS);
        try
        {
            selector = Selector.open();
            if (selfId >= 0)
            {
                final Member self = member(selfId);
                server = ServerSocketChannel.open();
                server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                server.bind(new InetSocketAddress(self.host(), self.port()));
                server.configureBlocking(false);
                server.register(selector, SelectionKey.OP_ACCEPT);
            }
            else
            {
                server = null;
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot listen on " + (selfId >= 0 ? member(selfId) : "nothing") + ": " +
                ex.getMessage(), ex);
        }
    }

    public int poll(final long nowNs, final MessageHandler handler)
    {
        this.nowNs = nowNs;
        this.handler = handler;
        work = 0;
        connectToMembers();
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
     * Wait until a socket is ready or the time is up, without handling anything: the next {@link #poll} does (the
     * selector reports a ready socket again until it is read). For an idle strategy; no allocation.
     *
     * @param timeoutMs longest wait.
     */
    public void awaitReady(final long timeoutMs)
    {
        try
        {
            selector.select(IGNORE_READY, timeoutMs);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "select failed: {0}", ex.toString());
        }
    }

    private static final Consumer<SelectionKey> IGNORE_READY = key -> { };

    public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
    {
        final Connection connection = endpoint < CLIENT_ENDPOINT_BASE ?
            (endpoint >= 0 && endpoint < memberConnections.length ? memberConnections[endpoint] : null) :
            clientConnections.get(endpoint);
        if (null == connection || !connection.connected)
        {
            return false;
        }
        return enqueue(connection, buffer, offset, length);
    }

    public boolean isConnected(final int endpoint)
    {
        final Connection c = endpoint < CLIENT_ENDPOINT_BASE ?
            (endpoint >= 0 && endpoint < memberConnections.length ? memberConnections[endpoint] : null) :
            clientConnections.get(endpoint);
        return null != c && c.connected;
    }

    public int flush(final long nowNs)
    {
        int written = 0;
        for (int i = 0; i < all.size(); i++)
        {
            final Connection c = all.get(i);
            if (c.connected && null != c.writeBuffer && c.writeBuffer.position() > 0)
            {
                c.writeBuffer.flip();
                try
                {
                    c.channel.write(c.writeBuffer);
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
        for (final Connection c : new ArrayList<>(all))
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
                final Connection c = new Connection(channel, m.id());
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
                    final Connection c = memberConnections[m.id()];
                    memberConnections[m.id()] = null;
                    all.remove(c);
                    CloseHelper.quietClose(c.channel);
                }
            }
        }
    }

    private void onReady(final SelectionKey key)
    {
        work++;
        if (key.isAcceptable())
        {
            accept();
            return;
        }
        final Connection c = (Connection)key.attachment();
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

    private void onConnected(final Connection c)
    {
        c.markConnected();
        backoffNs[c.connectTo] = MIN_BACKOFF_NS;
        final HelloEncoder hello = new HelloEncoder()
            .wrapAndApplyHeader(helloBuffer, 0, new MessageHeaderEncoder())
            .memberId(selfId)
            .segmentLength(segmentLength);
        enqueue(c, helloBuffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + hello.encodedLength());
        LOGGER.log(System.Logger.Level.DEBUG, "member {0} connected to {1}", selfId, c.connectTo);
    }

    private void accept()
    {
        try
        {
            SocketChannel channel;
            while (null != (channel = server.accept()))
            {
                if (all.size() >= members.length + MAX_CLIENTS)
                {
                    LOGGER.log(System.Logger.Level.WARNING, "refused connection from {0}: too many connections",
                        channel.getRemoteAddress());
                    channel.close();
                    continue;
                }
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final Connection c = new Connection(channel, -1);
                c.markConnected();
                c.key = channel.register(selector, SelectionKey.OP_READ, c);
                all.add(c);
            }
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "accept failed: {0}", ex.toString());
        }
    }

    private void read(final Connection c)
    {
        final int read;
        try
        {
            read = c.channel.read(c.readBuffer);
        }
        catch (final IOException ex)
        {
            disconnect(c, null);
            return;
        }
        if (read < 0)
        {
            disconnect(c, c.readBuffer.position() > 0 ? "connection closed in the middle of a message" : null);
            return;
        }

        int offset = 0;
        final int limit = c.readBuffer.position();
        while (limit - offset >= LENGTH_PREFIX)
        {
            final int length = c.readView.getInt(offset, ByteOrder.LITTLE_ENDIAN);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH || length > maxMessageLength)
            {
                disconnect(c, "bad message length " + length);
                return;
            }
            if (limit - offset - LENGTH_PREFIX < length)
            {
                break;
            }
            final int messageOffset = offset + LENGTH_PREFIX;
            offset = messageOffset + length;
            headerDecoder.wrap(c.readView, messageOffset);
            final int schemaId = headerDecoder.schemaId();
            final int newestVersion = acceptedSchemas.get(schemaId);
            if (newestVersion < 0)
            {
                disconnect(c, "unknown schema id " + schemaId);
                return;
            }
            if (headerDecoder.version() > newestVersion)
            {
                disconnect(c, "protocol version " + headerDecoder.version() + " of schema " + schemaId +
                    " is newer than " + newestVersion);
                return;
            }
            if (c.endpoint < 0)
            {
                if (!onHello(c, messageOffset))
                {
                    return;
                }
                continue;
            }
            if (isHello())
            {
                continue;
            }
            handler.onMessage(c.endpoint, c.readView, messageOffset, length);
            if (!c.channel.isOpen())
            {
                return;
            }
        }
        c.readBuffer.limit(limit).position(offset);
        c.readBuffer.compact();
    }

    private boolean onHello(final Connection c, final int messageOffset)
    {
        if (!isHello())
        {
            disconnect(c, "first message is template " + headerDecoder.templateId() + " of schema " +
                headerDecoder.schemaId() + ", not Hello");
            return false;
        }
        helloDecoder.wrap(c.readView, messageOffset + MessageHeaderDecoder.ENCODED_LENGTH,
            headerDecoder.blockLength(), headerDecoder.version());
        final int peerId = helloDecoder.memberId();
        if (peerId < 0)
        {
            if (clientConnections.size() >= MAX_CLIENTS)
            {
                disconnect(c, "too many client connections");
                return false;
            }
            c.endpoint = nextClientEndpoint++;
            clientConnections.put(c.endpoint, c);
            return true;
        }
        if (null == member(peerId) || peerId == selfId)
        {
            disconnect(c, "Hello from member id " + peerId + ", which is not a configured peer");
            return false;
        }
        if (helloDecoder.segmentLength() != segmentLength)
        {
            disconnect(c, "member " + peerId + " uses log segment length " + helloDecoder.segmentLength() +
                ", this member " + segmentLength + ": positions would disagree");
            return false;
        }
        final Connection previous = memberConnections[peerId];
        if (null != previous && previous != c)
        {
            // The peer reconnected (it restarted, or saw the old connection die first): the new one wins.
            disconnect(previous, null);
        }
        c.endpoint = peerId;
        memberConnections[peerId] = c;
        return true;
    }

    /** Template ids are per schema: Hello is template 10 of the client protocol, and nothing else. */
    private boolean isHello()
    {
        return headerDecoder.schemaId() == HelloDecoder.SCHEMA_ID && headerDecoder.templateId() == HelloDecoder.TEMPLATE_ID;
    }

    private boolean enqueue(final Connection c, final DirectBuffer buffer, final int offset, final int length)
    {
        final ByteBuffer out = c.writeBuffer;
        if (out.remaining() < LENGTH_PREFIX + length)
        {
            return false;
        }
        final int at = out.position();
        c.writeView.putInt(at, length, ByteOrder.LITTLE_ENDIAN);
        c.writeView.putBytes(at + LENGTH_PREFIX, buffer, offset, length);
        out.position(at + LENGTH_PREFIX + length);
        return true;
    }

    private void disconnect(final Connection c, final String reason)
    {
        if (null != reason)
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0} dropped connection to {1}: {2}", selfId,
                c.endpoint >= 0 ? c.endpoint : "unidentified peer", reason);
        }
        c.connected = false;
        if (null != c.key)
        {
            c.key.cancel();
        }
        CloseHelper.quietClose(c.channel);
        all.remove(c);
        if (c.endpoint >= CLIENT_ENDPOINT_BASE)
        {
            clientConnections.remove(c.endpoint);
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
