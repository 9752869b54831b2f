package io.lockstep.examples.matching;

import io.lockstep.cluster.client.SessionClient;
import io.lockstep.testkit.ServiceSimulation;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The matching engine under the test kit's simulation (in one thread, from a seed: crashes, lost writes,
 * partitions, snapshots lost and installed, clock steps), with two traders sending orders throughout: every order
 * is answered exactly once, and the kit checks after every step that members at the same position hold the same
 * books. Only the kit's public API ({@link ServiceSimulation}) is used, as a matching-engine team would.
 * {@code -Dlockstep.matching.seeds=N} (default 200), {@code -Dlockstep.matching.firstSeed=S}.
 */
class MatchingEngineSimulationTest
{
    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    @Test
    void everyOrderIsAnsweredExactlyOnceThroughEveryFault()
    {
        final long[] orders = new long[1];
        ServiceSimulation.forSeeds("matching engine simulation", Long.getLong("lockstep.matching.firstSeed", 1),
            Integer.getInteger("lockstep.matching.seeds", 200), seed -> orders[0] += runOne(seed));
        System.out.printf("matching engine simulation: %d orders, each answered exactly once%n", orders[0]);
    }

    private static long runOne(final long seed)
    {
        final ServiceSimulation.Run run = ServiceSimulation.start(seed, 2, MatchingEngineService::new, seed % 2 == 0);
        final TraderView[] views = { new TraderView(0), new TraderView(1) };
        final SessionClient[] traders = new SessionClient[2];
        for (int t = 0; t < 2; t++)
        {
            final TraderView view = views[t];
            traders[t] = run.client(t, new SessionClient.Listener()
            {
                public void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer,
                    final int offset, final int length)
                {
                    view.onReport(buffer, offset);
                }

                public void onEgressGap(final long sessionId, final long fromSequence)
                {
                    throw new AssertionError("execution reports lost from " + fromSequence);
                }

                public void onClosed(final long sessionId)
                {
                    throw new AssertionError("a trader's session was closed");
                }
            });
        }
        for (int step = 0; step < 3000; step++)
        {
            run.step(true);
            for (int t = 0; t < 2; t++)
            {
                if (run.random().nextInt(4) == 0 &&
                    traders[t].offer(views[t].nextOrder(run.random()), 0, views[t].orderLength()) >= 0)
                {
                    views[t].sent();
                }
                traders[t].doWork(run.nowNs());
            }
        }
        run.quiesce(traders);
        final long deadline = run.nowNs() + 30_000_000_000L;
        while (!(views[0].allAnswered() && views[1].allAnswered()))
        {
            assertTrue(run.nowNs() < deadline, "seed " + seed + ": every order answered within 30 simulated s");
            run.step(false);
            traders[0].doWork(run.nowNs());
            traders[1].doWork(run.nowNs());
        }
        return views[0].sentCount() + views[1].sentCount();
    }
}
