package io.lockstep.consensus.service;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;

/**
 * The service inside a DEDICATED member's consensus-thread copy of the container: it does nothing when called, since
 * what the real service did on the service thread is replayed into the copy from records ({@link EffectReplay}).
 * It carries the real service's application version, which the copy checks against each term's entries as the real
 * container does.
 */
final class RecordedService implements ClusteredService
{
    private final int appVersion;

    RecordedService(final int appVersion)
    {
        this.appVersion = appVersion;
    }

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
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
    }

    public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
    }

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
    }

    public void onRoleChange(final ClusterRole newRole)
    {
    }

    public void onTerminate(final Cluster cluster)
    {
    }

    public int appVersion()
    {
        return appVersion;
    }
}
