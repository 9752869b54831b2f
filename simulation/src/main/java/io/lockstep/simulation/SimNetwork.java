package io.lockstep.simulation;

import io.lockstep.cluster.transport.FrameValidator;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.MemberProtocolShapes;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A network with TCP's semantics between simulated endpoints: each directed link delivers in order, after a seeded
 * delay; a link that breaks (a crash, a partition) loses everything in flight on it, both ways, and stays down until
 * both ends are up and can reach each other again. Deterministic for a seed.
 * <p>
 * Besides group partitions, the faults that break real deployments in less tidy ways:
 * <ul>
 *   <li>a <b>one-way blackhole</b>: everything one endpoint sends another is lost, while the connection looks up
 *   from both ends and the other direction works (a TCP stream whose one direction is dropped, until it times
 *   out);</li>
 *   <li>a <b>cut</b> between one pair only, so an endpoint can reach some peers and not others;</li>
 *   <li>a <b>flapping</b> link: a pair that is cut and restored again and again, a few milliseconds apart.</li>
 * </ul>
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
        long bytesSent;
    }

    private final Random random;
    private final long minDelayNs;
    private final long maxDelayNs;
    private final long stallNs;
    private final Map<Long, Link> links = new HashMap<>();
    private final int[] endpoints;
    private final boolean[] up;
    private final int[] partitionGroup;
    /** Directed pairs (from, to) whose messages are lost. */
    private final Set<Long> blackholes = new HashSet<>();
    /** Unordered pairs that cannot reach each other. */
    private final Set<Long> cuts = new HashSet<>();
    /** Unordered pairs whose link flaps: toggled between cut and whole at random. */
    private final Set<Long> flapping = new HashSet<>();
    private final List<Long> flapScratch = new ArrayList<>();
    private boolean stalls = true;
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
        Arrays.fill(up, true);
    }

    void now(final long nowNs)
    {
        this.nowNs = nowNs;
        if (!flapping.isEmpty())
        {
            flapScratch.clear();
            flapScratch.addAll(flapping);
            Collections.sort(flapScratch);
            for (final long pair : flapScratch)
            {
                // About every 5 ms of simulated time at a step of up to 1 ms.
                if (random.nextInt(8) == 0)
                {
                    final int a = (int)(pair >>> 32);
                    final int b = (int)pair;
                    if (!cuts.remove(pair))
                    {
                        cut(a, b);
                    }
                }
            }
        }
    }

    /**
     * Lose everything {@code from} sends {@code to}, while the connection looks up and the other way works.
     */
    void blackhole(final int from, final int to)
    {
        blackholes.add(((long)from << 32) | (to & 0xFFFFFFFFL));
    }

    /**
     * Cut the link between two endpoints only: each still reaches everyone else.
     */
    void cut(final int a, final int b)
    {
        cuts.add(pair(a, b));
        breakLink(a, b);
    }

    /**
     * Make the link between two endpoints flap until healed.
     */
    void flap(final int a, final int b)
    {
        flapping.add(pair(a, b));
    }

    private static long pair(final int a, final int b)
    {
        return ((long)Math.min(a, b) << 32) | (Math.max(a, b) & 0xFFFFFFFFL);
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

    /**
     * @param stalls false to stop delaying messages beyond the election timeout (a healthy network but for the
     *               faults injected), to see what a fault does by itself.
     */
    void stalls(final boolean stalls)
    {
        this.stalls = stalls;
    }

    void healAll()
    {
        Arrays.fill(partitionGroup, 0);
        blackholes.clear();
        cuts.clear();
        flapping.clear();
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
        return up[index(a)] && up[index(b)] && partitionGroup[index(a)] == partitionGroup[index(b)] &&
            (cuts.isEmpty() || !cuts.contains(pair(a, b)));
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

    /** @return bytes sent from one endpoint to another so far (what would cross that link). */
    public long bytesSent(final int from, final int to)
    {
        return link(from, to).bytesSent;
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
        /** Every message members and clients send must pass the check a TCP member makes of it. */
        private final FrameValidator validator = new FrameValidator(MemberProtocolShapes.create());

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
                    if (!validator.isValid(view, 0, bytes.length))
                    {
                        // Only Lockstep's own code sends on the simulated network: a message a member's transport
                        // would refuse is a bug in whoever encoded it.
                        throw new IllegalStateException("endpoint " + from + " sent endpoint " + self + " a message " +
                            "the transport's check refuses: " + validator.reason());
                    }
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
            if (!blackholes.isEmpty() && blackholes.contains(((long)self << 32) | (endpoint & 0xFFFFFFFFL)))
            {
                messagesLost++;
                return true;
            }
            final Link link = link(self, endpoint);
            // Now and then a stall longer than an election timeout (a GC pause, a congested switch).
            final long delay = random.nextInt(200) == 0 && stalls ? (long)(random.nextDouble() * stallNs) :
                minDelayNs + (long)(random.nextDouble() * (maxDelayNs - minDelayNs));
            // In order per link, like a TCP stream.
            final long deliverAt = Math.max(nowNs + delay, link.lastDeliverAtNs);
            link.lastDeliverAtNs = deliverAt;
            link.bytesSent += length;
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
