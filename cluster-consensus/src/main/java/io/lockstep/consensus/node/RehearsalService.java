package io.lockstep.consensus.node;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The service of a {@link JitRehearsal}'s throwaway cluster: answers every message with itself, arms and fires a
 * timer every 64 messages, and snapshots a counter. It touches every kind of callback a real service gets, so the
 * member code around them is compiled with each kind seen; it does nothing a user's service would notice.
 */
final class RehearsalService implements ClusteredService
{
    private static final long TIMER_DELAY_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final AtomicInteger snapshotsTaken;
    private final UnsafeBuffer counterBuffer = new UnsafeBuffer(new byte[Long.BYTES]);
    private Cluster cluster;
    private long applied;

    RehearsalService(final AtomicInteger snapshotsTaken)
    {
        this.snapshotsTaken = snapshotsTaken;
    }

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
        this.cluster = cluster;
        if (null != snapshot)
        {
            while (!snapshot.isDone())
            {
                snapshot.poll((buffer, offset, length) -> applied = buffer.getLong(offset), 1);
            }
        }
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
        final int length)
    {
        applied++;
        if (0 == (applied & 63))
        {
            cluster.scheduleTimer(applied, timestamp + TIMER_DELAY_NS);
        }
        if (null != session)
        {
            session.offer(buffer, offset, length);
        }
    }

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
        applied++;
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
        counterBuffer.putLong(0, applied);
        writer.append(counterBuffer, 0, Long.BYTES);
        snapshotsTaken.incrementAndGet();
    }
}
