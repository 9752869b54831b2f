package io.lockstep.examples.quickstart;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The smallest useful service: it adds each number a client sends to a running total and answers with the new
 * total. Every member applies the same messages in the same order, so every member holds the same total.
 */
public final class TotalService implements ClusteredService
{
    private final UnsafeBuffer reply = new UnsafeBuffer(new byte[Long.BYTES]);
    private long total;

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
        if (null != snapshot)
        {
            snapshot.poll((buffer, offset, length) -> total = buffer.getLong(offset), 1);
        }
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
        final int length)
    {
        if (length != Long.BYTES)
        {
            return; // not a number: nothing to add, and nothing to answer
        }
        total += buffer.getLong(offset);
        reply.putLong(0, total);
        session.offer(reply, 0, Long.BYTES);
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
        reply.putLong(0, total);
        writer.append(reply, 0, Long.BYTES);
    }

    /**
     * What the simulation and {@code tool status} compare across members: equal at equal log positions, or a replica
     * has diverged.
     */
    public long stateHash()
    {
        return total;
    }
}
