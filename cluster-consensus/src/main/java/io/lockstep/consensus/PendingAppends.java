package io.lockstep.consensus;

import io.lockstep.consensus.codecs.AppendStatus;

/**
 * Driver appends waiting for their entry to commit, in log order: a bounded ring, so a flood of appends is met
 * with back pressure rather than memory growth.
 */
final class PendingAppends
{
    private final long[] positions;
    private final long[] correlationIds;
    private final int[] endpoints;
    private int head;
    private int size;

    PendingAppends(final int capacity)
    {
        positions = new long[capacity];
        correlationIds = new long[capacity];
        endpoints = new int[capacity];
    }

    boolean isFull()
    {
        return size == positions.length;
    }

    void add(final long position, final long correlationId, final int endpoint)
    {
        final int index = (head + size) % positions.length;
        positions[index] = position;
        correlationIds[index] = correlationId;
        endpoints[index] = endpoint;
        size++;
    }

    void ackCommitted(final MemberProtocolPublisher publisher, final long commitPosition, final int leaderId)
    {
        while (size > 0 && positions[head] <= commitPosition)
        {
            publisher.clientAppendAck(endpoints[head], correlationIds[head], AppendStatus.OK, positions[head],
                leaderId);
            head = (head + 1) % positions.length;
            size--;
        }
    }

    /**
     * Leadership lost: the outcome of every pending append is unknown (it may still commit under the next leader).
     */
    void failAll(final MemberProtocolPublisher publisher, final int newLeaderId)
    {
        while (size > 0)
        {
            publisher.clientAppendAck(endpoints[head], correlationIds[head], AppendStatus.NOT_LEADER, -1, newLeaderId);
            head = (head + 1) % positions.length;
            size--;
        }
    }
}
