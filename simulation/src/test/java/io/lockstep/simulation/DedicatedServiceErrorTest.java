package io.lockstep.simulation;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AgentTerminationException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * In the DEDICATED mode a service that throws does so on the service thread: the member must stop all the same, as
 * it does when one thread runs everything, rather than let consensus run on beside a service that skipped an entry.
 */
class DedicatedServiceErrorTest
{
    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    /** Schedules a timer at start and throws when it fires. */
    static final class FailsOnTimer implements ClusteredService
    {
        public void onStart(final Cluster cluster, final SnapshotReader snapshot)
        {
            cluster.scheduleTimer(1, cluster.time() + 1_000_000);
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

        public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
        {
        }

        public void onTimerEvent(final long correlationId, final long timestamp)
        {
            throw new IllegalStateException("the service failed on its timer");
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
    }

    @Test
    void aServiceThatThrowsOnItsOwnThreadStopsItsMember()
    {
        final SimServiceCluster cluster = new SimServiceCluster(1, 0, FailsOnTimer::new, false);
        assumeTrue(cluster.isDedicated(), "seed 1 runs DEDICATED unless -Dlockstep.sim.threading=shared");
        AgentTerminationException thrown = null;
        for (int step = 0; step < 200_000 && null == thrown; step++)
        {
            try
            {
                cluster.step(false);
            }
            catch (final AgentTerminationException ex)
            {
                thrown = ex;
            }
        }
        assertNotNull(thrown, "the timer fired and the service threw within 200,000 steps");
        assertEquals("the service failed on its timer", thrown.getCause().getMessage());

        int stopped = 0;
        for (int i = 0; i < SimServiceCluster.MEMBERS; i++)
        {
            try
            {
                cluster.member(i).doWork();
            }
            catch (final IllegalStateException ex)
            {
                assertTrue(ex.getMessage().contains("the service thread stopped on an error"), ex.getMessage());
                assertEquals("the service failed on its timer", ex.getCause().getMessage());
                stopped++;
            }
        }
        assertEquals(1, stopped, "the member whose service thread threw stops on its next duty cycle");
    }
}
