package io.lockstep.examples.matching;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.testkit.ContainerCluster;
import io.lockstep.testkit.DockerRequirement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The matching engine's failover test, written as a team building on Lockstep would, with the test kit's public API
 * only: three member containers running {@link MatchingEngineService}, a trader sending orders throughout, the
 * leader SIGKILLed and then a follower frozen; every order is answered exactly once and the members' books agree.
 */
class MatchingEngineFailoverIT
{
    @TempDir
    Path dir;

    @BeforeAll
    static void docker()
    {
        DockerRequirement.check();
    }

    @Test
    void ordersAreAnsweredExactlyOnceThroughALeaderKillAndAHungFollower() throws Exception
    {
        try (ContainerCluster cluster = ContainerCluster.of(3, MatchingEngineService.class, dir))
        {
            cluster.start();
            final int leader = cluster.awaitLeader(Duration.ofSeconds(30));
            final TraderView trader = new TraderView(0);
            final Random random = new Random(42);
            try (ClusterClient client = cluster.client((session, sequence, buffer, offset, length) ->
                trader.onReport(buffer, offset)))
            {
                assertTrue(client.awaitConnected(10_000));
                trade(client, trader, random, 1000);
                cluster.kill(leader);
                trade(client, trader, random, 1500);
                assertTrue(client.leaderId() != leader, "the trader moved to the new leader");
                final int follower = (client.leaderId() + 1) % 3 == leader ? (client.leaderId() + 2) % 3 :
                    (client.leaderId() + 1) % 3;
                cluster.pause(follower);
                trade(client, trader, random, 1000);
                cluster.unpause(follower);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!trader.allAnswered())
                {
                    assertTrue(System.nanoTime() < deadline, "every order answered within 20 s");
                    client.poll();
                }
                System.out.printf("matching engine failover: %d orders, each answered exactly once%n",
                    trader.sentCount());
            }
            cluster.restart(leader);
            cluster.assertReplicasAgree(Duration.ofSeconds(30));
        }
    }

    /** About 500 orders a second for a while, polling between them. */
    private static void trade(final ClusterClient client, final TraderView trader, final Random random,
        final long millis)
    {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long nextNs = System.nanoTime();
        while (System.nanoTime() < end)
        {
            if (System.nanoTime() >= nextNs &&
                client.offer(trader.nextOrder(random), 0, trader.orderLength()) >= 0)
            {
                trader.sent();
                nextNs += TimeUnit.MILLISECONDS.toNanos(2);
            }
            client.poll();
        }
    }
}
