package io.lockstep.cluster.transport;

import org.agrona.CloseHelper;
import org.agrona.collections.Int2ObjectHashMap;

import java.util.ArrayList;
import java.util.List;

/**
 * Who is connected: every open connection, members' by id and clients' and tools' by endpoint, and the counts the
 * transport's bounds are checked against (handshakes in flight, accepted connections holding a handshake slot,
 * tools). The transport moves the bytes; this keeps the books, so that a connection enters and leaves them in one
 * place each.
 */
final class ConnectionTable
{
    /** Connections that proved the tool secret, beside the client bound: an operator can always get in. */
    static final int MAX_TOOL_CONNECTIONS = 32;
    /** Small buffers kept for the next accepted connection: enough for every handshake in flight at the bound. */
    private static final int POOLED_HANDSHAKE_BUFFERS = 2 * 64;

    /** An array, not a map: a member's connection is looked up on every send. */
    private final TcpConnection[] members;
    private final Int2ObjectHashMap<TcpConnection> clients = new Int2ObjectHashMap<>();
    private final List<TcpConnection> all = new ArrayList<>();
    private final HandshakeBuffers handshakeBuffers = new HandshakeBuffers(POOLED_HANDSHAKE_BUFFERS);
    private final BufferBudget clientBudget = new BufferBudget(ConnectionLimits.DEFAULTS.clientBufferBytes());
    private int handshakesPending;
    /** Accepted connections still in their handshake (dialled ones are this member's own, and bounded by ids). */
    private int handshakeSlotsHeld;
    private int toolConnections;
    private int nextClientEndpoint = Transport.CLIENT_ENDPOINT_BASE;

    ConnectionTable(final int maxMemberId)
    {
        members = new TcpConnection[maxMemberId + 1];
    }

    /** @return the ready or handshaking connection of an endpoint (member id or client endpoint), or null. */
    TcpConnection get(final int endpoint)
    {
        return endpoint < Transport.CLIENT_ENDPOINT_BASE ?
            (endpoint >= 0 && endpoint < members.length ? members[endpoint] : null) : clients.get(endpoint);
    }

    /** @return the connection to or from a member, by id (an index into the table), or null. */
    TcpConnection member(final int id)
    {
        return members[id];
    }

    int memberSlots()
    {
        return members.length;
    }

    /** @return every open connection; index it rather than iterate, which would allocate. */
    List<TcpConnection> all()
    {
        return all;
    }

    int clients()
    {
        return clients.size();
    }

    /** @return clients that are not trusted tools: what the client bound counts. */
    int openClients()
    {
        return clients.size() - toolConnections;
    }

    /** @return true if a sweep has anything to look at: a handshake in flight, or a client to time out. */
    boolean anyToSweep()
    {
        return handshakesPending > 0 || !clients.isEmpty();
    }

    int handshakeSlotsHeld()
    {
        return handshakeSlotsHeld;
    }

    HandshakeBuffers handshakeBuffers()
    {
        return handshakeBuffers;
    }

    BufferBudget clientBudget()
    {
        return clientBudget;
    }

    /** A connection this member dials to a member, before it is open. */
    void addDialled(final int memberId, final TcpConnection c)
    {
        members[memberId] = c;
        all.add(c);
    }

    /** A connection accepted from anyone: it holds a handshake slot until it says who it is. */
    void addAccepted(final TcpConnection c, final long handshakeDeadlineNs)
    {
        startHandshake(c, handshakeDeadlineNs);
        c.holdsHandshakeSlot = true;
        handshakeSlotsHeld++;
        all.add(c);
    }

    void startHandshake(final TcpConnection c, final long deadlineNs)
    {
        c.handshakeDeadlineNs = deadlineNs;
        handshakesPending++;
    }

    void endHandshake(final TcpConnection c)
    {
        releaseHandshake(c);
        c.stage = TcpConnection.Stage.READY;
    }

    /**
     * Accepting side: the handshake is done; the connection becomes a member's or a client's endpoint.
     *
     * @param toolsProve the member holds a secret, so a trusted client is a tool that proved the tool secret.
     * @return null, or why the connection is refused (the tools' bound).
     */
    String register(final TcpConnection c, final int peerId, final boolean trusted, final boolean toolsProve,
        final long nowNs)
    {
        endHandshake(c);
        c.trusted = trusted;
        c.connected = true;
        if (peerId < 0)
        {
            if (trusted && toolsProve)
            {
                if (toolConnections >= MAX_TOOL_CONNECTIONS)
                {
                    return "refused a tool connection: " + MAX_TOOL_CONNECTIONS + " are open";
                }
                c.tool = true;
                toolConnections++;
            }
            c.budget = clientBudget;
            c.endpoint = nextClientEndpoint++;
            c.lastHeardNs = nowNs;
            clients.put(c.endpoint, c);
            return null;
        }
        c.growWriteBufferToFull();
        c.growReadBufferToFull();
        c.lastHeardNs = nowNs;
        c.endpoint = peerId;
        members[peerId] = c;
        return null;
    }

    /** Take a closed connection out of the books, and give back what it held. */
    void remove(final TcpConnection c)
    {
        releaseHandshake(c);
        if (c.connectTo < 0)
        {
            c.releaseBudget();
            c.releaseBuffers(handshakeBuffers);
        }
        all.remove(c);
        if (c.endpoint >= Transport.CLIENT_ENDPOINT_BASE)
        {
            clients.remove(c.endpoint);
            if (c.tool)
            {
                toolConnections--;
            }
        }
        else if (c.endpoint >= 0 && members[c.endpoint] == c)
        {
            members[c.endpoint] = null;
        }
    }

    /** The transport closes: every channel at once, and the list of open connections. */
    void closeAll()
    {
        for (int i = 0; i < all.size(); i++)
        {
            CloseHelper.quietClose(all.get(i).channel);
        }
        all.clear();
    }

    /**
     * A dial that failed before the connection opened: it never held anything but its place.
     *
     * @return the connection, whose channel the caller closes, or null if there was none.
     */
    TcpConnection removeDialled(final int memberId)
    {
        final TcpConnection c = members[memberId];
        if (null != c)
        {
            members[memberId] = null;
            all.remove(c);
        }
        return c;
    }

    /**
     * The connection to close to make room for one more accepted: the oldest silent one (no Hello, and nothing the
     * TLS engine could act on: see {@link #isSilent}), or if none is silent, the one longest in its handshake. A peer
     * that says Hello at once, as members, tools and clients do, is past this stage before the silent ones queued
     * around it: refusing new connections instead would lock out a reconnecting member for as long as a flood lasts.
     *
     * @return the connection, or null if none holds a slot.
     */
    TcpConnection evictionCandidate()
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
        return oldest;
    }

    /**
     * Accepted and has said nothing the member could act on: no Hello, and no whole TLS handshake message (see
     * {@link TlsLink#spoke}). A connection whose handshake moved on, or whose whole record waits for this member's
     * share of handshake work, has spoken and is not evicted before these; one that sent only part of a record, or a
     * record holding part of a ClientHello, has not (a flood of those would otherwise keep a restarting member's
     * connection the oldest that spoke, and evict it).
     */
    static boolean isSilent(final TcpConnection c)
    {
        return TcpConnection.Stage.AWAIT_HELLO == c.stage && (null == c.tls || !c.tls.spoke());
    }

    private void releaseHandshake(final TcpConnection c)
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
    }
}
