package io.lockstep.consensus.sim;

import io.lockstep.cluster.transport.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * A network with TCP's semantics between simulated endpoints: each directed link delivers in order, after a seeded
 * delay; a link that breaks (a crash, a partition) loses everything in flight on it, both ways, and stays down until
 * both ends are up and can reach each other again. Deterministic for a seed.
 */
final class SimNetwork
{
    private static final class Message
    {
        final long deliverAtNs;
        final byte[] bytes;

        Message(final long deliverAtNs, final byte[] bytes)
        {
            this.deliverAtNs = deliverAtNs;
            this.bytes = bytes;
        }
    }

    private static final class Link
    {
        final ArrayDeque<Message> queue = new ArrayDeque<>();
        long lastDeliverAtNs;
    }

    private final Random random;
    private final long minDelayNs;
    private final long maxDelayNs;
    private final long stallNs;
    private final Map<Long, Link> links = new HashMap<>();
    private final int[] endpoints;
    private final boolean[] up;
    private final int[] partitionGroup;
    private long nowNs;
    private long messagesDelivered;
    private long messagesLost;

    /**
     * @param endpoints every endpoint id that will take part, in a fixed order (delivery order is derived from it).
     */
    SimNetwork(
        final Random random, final int[] endpoints, final long minDelayNs, final long maxDelayNs, final long stallNs)
    {
        this.stallNs = stallNs;
        this.random = random;
        this.endpoints = endpoints.clone();
        this.minDelayNs = minDelayNs;
        this.maxDelayNs = maxDelayNs;
        this.up = new boolean[endpoints.length];
        this.partitionGroup = new int[endpoints.length];
        java.util.Arrays.fill(up, true);
    }

    void now(final long nowNs)
    {
        this.nowNs = nowNs;
    }

    long nowNs()
    {
        return nowNs;
    }

    Transport transportFor(final int endpoint)
    {
        return new SimTransport(endpoint);
    }

    void setUp(final int endpoint, final boolean isUp)
    {
        up[index(endpoint)] = isUp;
        if (!isUp)
        {
            breakLinksOf(endpoint);
        }
    }

    /**
     * Put an endpoint in a partition group: it reaches only endpoints in the same group (0 is the main group).
     */
    void partition(final int endpoint, final int group)
    {
        partitionGroup[index(endpoint)] = group;
        for (final int other : endpoints)
        {
            if (!reachable(endpoint, other))
            {
                breakLink(endpoint, other);
            }
        }
    }

    void healAll()
    {
        java.util.Arrays.fill(partitionGroup, 0);
    }

    int partitionGroup(final int endpoint)
    {
        return partitionGroup[index(endpoint)];
    }

    long messagesDelivered()
    {
        return messagesDelivered;
    }

    long messagesLost()
    {
        return messagesLost;
    }

    private boolean reachable(final int a, final int b)
    {
        return up[index(a)] && up[index(b)] && partitionGroup[index(a)] == partitionGroup[index(b)];
    }

    private void breakLinksOf(final int endpoint)
    {
        for (final int other : endpoints)
        {
            breakLink(endpoint, other);
        }
    }

    private void breakLink(final int a, final int b)
    {
        drop(link(a, b));
        drop(link(b, a));
    }

    private void drop(final Link link)
    {
        messagesLost += link.queue.size();
        link.queue.clear();
    }

    private Link link(final int from, final int to)
    {
        return links.computeIfAbsent(((long)from << 32) | (to & 0xFFFFFFFFL), k -> new Link());
    }

    private int index(final int endpoint)
    {
        for (int i = 0; i < endpoints.length; i++)
        {
            if (endpoints[i] == endpoint)
            {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown endpoint " + endpoint);
    }

    private final class SimTransport implements Transport
    {
        private final int self;
        private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);

        SimTransport(final int self)
        {
            this.self = self;
        }

        public int poll(final long nowNs, final MessageHandler handler)
        {
            int delivered = 0;
            for (final int from : endpoints)
            {
                if (from == self)
                {
                    continue;
                }
                final Link link = link(from, self);
                while (!link.queue.isEmpty() && link.queue.peekFirst().deliverAtNs <= nowNs)
                {
                    final byte[] bytes = link.queue.pollFirst().bytes;
                    view.wrap(bytes);
                    messagesDelivered++;
                    delivered++;
                    handler.onMessage(from, view, 0, bytes.length);
                }
            }
            return delivered;
        }

        public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
        {
            if (!reachable(self, endpoint))
            {
                return false;
            }
            final Link link = link(self, endpoint);
            // Now and then a stall longer than an election timeout (a GC pause, a congested switch).
            final long delay = random.nextInt(200) == 0 ? (long)(random.nextDouble() * stallNs) :
                minDelayNs + (long)(random.nextDouble() * (maxDelayNs - minDelayNs));
            // In order per link, like a TCP stream.
            final long deliverAt = Math.max(nowNs + delay, link.lastDeliverAtNs);
            link.lastDeliverAtNs = deliverAt;
            final byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            link.queue.addLast(new Message(deliverAt, bytes));
            return true;
        }

        public boolean isConnected(final int endpoint)
        {
            return reachable(self, endpoint);
        }

        public int flush(final long nowNs)
        {
            return 0;
        }

        public void close()
        {
        }
    }
}
