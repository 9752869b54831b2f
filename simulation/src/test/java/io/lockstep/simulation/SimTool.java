package io.lockstep.simulation;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.MembershipAction;
import io.lockstep.consensus.codecs.MembershipChangeRequestEncoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.Role;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * An operator's tool in the simulation, on a client endpoint: asks the leader for membership changes as
 * {@code tool add-member}, {@code promote-member} and {@code remove-member} do.
 */
final class SimTool
{
    private final SimServiceCluster cluster;
    private final Transport transport;
    private final UnsafeBuffer request = new UnsafeBuffer(new byte[64]);
    private final MembershipChangeRequestEncoder encoder = new MembershipChangeRequestEncoder();
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();

    SimTool(final SimServiceCluster cluster, final int clientIndex)
    {
        this.cluster = cluster;
        this.transport = cluster.clientTransport(clientIndex);
    }

    /** @return the member that leads now, or -1. */
    int leader()
    {
        for (final int id : cluster.memberIds())
        {
            if (null != cluster.member(id) && Role.LEADER == cluster.member(id).consensus().role())
            {
                return id;
            }
        }
        return -1;
    }

    /** @return true if the request went to a leader (which may still refuse it). */
    boolean ask(final MembershipAction action, final int memberId)
    {
        final int leader = leader();
        if (leader < 0)
        {
            return false;
        }
        final int length = encoder.wrapAndApplyHeader(request, 0, header).correlationId(cluster.random().nextLong())
            .action(action).memberId(memberId).encodedLength();
        return transport.send(leader, request, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    /** Take (and drop) the answers. */
    void poll()
    {
        transport.poll(cluster.nowNs(), (from, buffer, offset, length) ->
        {
        });
    }
}
