package io.lockstep.examples;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

/**
 * Sends every message back to its session: the service the benchmarks measure round trips through.
 */
public final class EchoService implements ClusteredService
{
    private long echoed;

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
        if (null != snapshot)
        {
            // One fragment: the count (the echo service keeps nothing else).
            snapshot.poll((buffer, offset, length) -> echoed = buffer.getLong(offset, ByteOrder.LITTLE_ENDIAN),
                1);
        }
    }

    public void onSessionOpen(final ClientSession session, final long timestamp)
    {
    }

    public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
    {
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
    {
        if (null != session)
        {
            // Egress is buffered on every member and never refused for back pressure (see ClientSession), so the
            // result needs no retry here; a message too long for the session's buffer is dropped.
            session.offer(buffer, offset, length);
            echoed++;
        }
    }

    public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
        // Echo offers none.
    }

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
        buffer.putLong(0, echoed, ByteOrder.LITTLE_ENDIAN);
        writer.append(buffer, 0, 8);
    }

    public long stateHash()
    {
        return echoed;
    }

    public void onRoleChange(final ClusterRole newRole)
    {
    }

    public void onTerminate(final Cluster cluster)
    {
    }

    /**
     * @return messages echoed.
     */
    public long echoed()
    {
        return echoed;
    }
}
