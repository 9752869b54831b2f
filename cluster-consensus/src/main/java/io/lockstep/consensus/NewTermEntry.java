package io.lockstep.consensus;

import io.lockstep.consensus.log.MessageHeaderEncoder;
import io.lockstep.consensus.log.NewLeadershipTermEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The entry a new leader appends first in its term: the term, the leader, its service's version and the
 * configuration it leads (a snapshot of the membership, so that replay and recovery need nothing else). Encoded into
 * a buffer of its own, made once.
 */
final class NewTermEntry
{
    private static final int PAYLOAD_LENGTH = 64;

    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[PAYLOAD_LENGTH]);
    private final NewLeadershipTermEncoder encoder = new NewLeadershipTermEncoder();
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private int length;

    /** Encode the entry; {@link #buffer()} and {@link #length()} then hold it. */
    NewTermEntry encode(
        final long timestampNs, final long term, final int leaderId, final int appVersion, final Membership membership)
    {
        length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.wrapAndApplyHeader(buffer, 0, header)
            .timestamp(timestampNs).term(term).leaderId(leaderId).appVersion(appVersion)
            .configEpoch(membership.epoch()).voters(membership.voters()).learners(membership.learners())
            .encodedLength();
        return this;
    }

    DirectBuffer buffer()
    {
        return buffer;
    }

    int length()
    {
        return length;
    }
}
