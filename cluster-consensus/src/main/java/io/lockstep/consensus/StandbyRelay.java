package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;
import org.agrona.DirectBuffer;

/**
 * The standbys' relay ({@link ConsensusConfig#relay}): one standby receives the leader's appends and passes each on,
 * as received, to the other standbys, so that one copy of the stream crosses the zone link. They answer the leader
 * directly. On every other member this does nothing.
 */
final class StandbyRelay
{
    private final ConsensusAgent agent;
    private final Transport transport;
    /** The relaying standby's member id, or -1 when the standbys are fed by the leader. */
    private final int relay;

    StandbyRelay(final ConsensusAgent agent, final Transport transport, final int relay)
    {
        this.agent = agent;
        this.transport = transport;
        this.relay = relay;
    }

    /**
     * @return true if an append from this member may stand for the leader's: it is the relay and this member is a
     * standby the relay feeds.
     */
    boolean isRelayedAppend(final int from)
    {
        return from == relay && from != agent.memberId() && agent.membership().isLearner(agent.memberId());
    }

    /**
     * On the relay, after its own consensus took the append: pass it on to every other standby, but only if it came
     * from the member this relay now follows as leader (the door has already checked that the sender is the leader
     * the append names). The append of a former leader, once a newer one is followed, goes no further.
     */
    void forward(final int from, final int leaderId, final DirectBuffer buffer, final int offset, final int length)
    {
        final int self = agent.memberId();
        if (relay != self || from != leaderId || agent.leaderId() != from || !agent.membership().isLearner(self))
        {
            return;
        }
        for (long rest = agent.membership().learners() & ~(1L << self); rest != 0; rest &= rest - 1)
        {
            transport.send(Long.numberOfTrailingZeros(rest), buffer, offset, length);
        }
    }
}
