package io.lockstep.examples.quickstart;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.testkit.ServiceSimulation;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TotalService} under the test kit's simulation: three members in one thread, from a seed, through crashes,
 * lost writes, partitions, snapshots and clock steps, while a client adds 1, 2, 3, ... The client must see every
 * running total once, in order, and the kit checks after every step that members at the same log position hold the
 * same total ({@link TotalService#stateHash()}). A failing seed is named, and replays.
 */
class TotalServiceSimulationTest
{
    @Test
    void everyNumberIsAddedOnceThroughEveryFault()
    {
        ServiceSimulation.forSeeds("total service", 1, 100, seed ->
        {
            final ServiceSimulation.Run run = ServiceSimulation.start(seed, 1, TotalService::new, true);
            final List<Long> totals = new ArrayList<>();
            final ClusterClient client = run.client(0, new ClusterClient.EgressListener()
            {
                public void onMessage(final long sessionId, final long sequence, final DirectBuffer buffer,
                    final int offset, final int length)
                {
                    totals.add(buffer.getLong(offset));
                }

                public void onEgressGap(final long sessionId, final long fromSequence)
                {
                    throw new AssertionError("answers lost from " + fromSequence);
                }

                public void onSessionClosed(final long sessionId)
                {
                    throw new AssertionError("the session was closed");
                }
            });
            final UnsafeBuffer message = new UnsafeBuffer(new byte[Long.BYTES]);
            long next = 1;
            for (int step = 0; step < 2000; step++)
            {
                run.step(true);
                message.putLong(0, next);
                if (run.random().nextInt(3) == 0 && client.offer(message, 0, Long.BYTES) >= 0)
                {
                    next++;
                }
                client.poll();
            }
            run.quiesce(client);
            final long deadline = run.nowNs() + 30_000_000_000L;
            while (totals.size() < next - 1)
            {
                assertTrue(run.nowNs() < deadline, totals.size() + " of " + (next - 1) + " answered");
                run.step(false);
                client.poll();
            }
            long total = 0;
            for (int i = 0; i < totals.size(); i++)
            {
                total += i + 1;
                assertEquals(total, totals.get(i), "running total " + (i + 1));
            }
        });
    }
}
