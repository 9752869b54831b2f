package io.lockstep.cluster.transport;

/**
 * The bytes client and tool connections' buffers hold beyond their first {@value TcpConnection#HANDSHAKE_BUFFER_LENGTH}
 * each: growing one reserves from here, closing one gives back. A connection whose growth the budget refuses is
 * closed, so that no number of clients can make a member hold more than the budget in buffers, however much each
 * claims or fails to read. Owned by the transport's thread.
 */
final class BufferBudget
{
    private long limit;
    private long used;

    BufferBudget(final long limit)
    {
        this.limit = limit;
    }

    void limit(final long limit)
    {
        this.limit = limit;
    }

    /**
     * @return true if the bytes were reserved; false if that would pass the budget.
     */
    boolean reserve(final long bytes)
    {
        if (used + bytes > limit)
        {
            return false;
        }
        used += bytes;
        return true;
    }

    void release(final long bytes)
    {
        used -= bytes;
    }

    long used()
    {
        return used;
    }
}
