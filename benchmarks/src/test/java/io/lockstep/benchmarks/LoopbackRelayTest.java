package io.lockstep.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopbackRelayTest
{
    @Test
    void everyMessageComesBackOnceThroughALeaderAndTwoFollowerProcesses() throws Exception
    {
        final int rate = 2000;
        final LoopbackRelay.Result result = LoopbackRelay.run(rate, 288, 1);

        // The measured second sends 2,000 messages; the last few may still be on their way when it ends. A message
        // echoed twice, or lost, would move the count out of this band.
        final long echoed = result.latency().roundTrip.getTotalCount();
        assertTrue(echoed <= rate && echoed >= rate - 20, "echoed " + echoed + " of " + rate);
        for (final double cpu : result.cpuSeconds())
        {
            assertTrue(cpu >= 0, "each relay process's CPU was read: " + cpu);
        }
        assertTrue(result.membersCpuUsPerMessage() > 0, "the relay processes spent CPU");
        assertTrue(LoopbackRelay.summary(rate, 288, result).contains(" members_cpu_us_per_msg="));
    }

    @Test
    void aDurableRelayEchoesEveryMessageOnceAndEachProcessKeepsAPromise(@TempDir final Path dir) throws Exception
    {
        final int rate = 2000;
        final int size = 288;
        final LoopbackRelay.Result result = LoopbackRelay.runDurable(rate, size, 1, 2, dir);

        // Each echo waits for two rounds of two syncs: the last 100 ms of messages may still be on their way.
        final long echoed = result.latency().roundTrip.getTotalCount();
        assertTrue(echoed <= rate && echoed >= rate - rate / 10, "echoed " + echoed + " of " + rate);
        try (Stream<Path> files = Files.list(dir))
        {
            final List<Path> promises = files.filter(f -> f.toString().endsWith(".promise")).toList();
            assertEquals(3, promises.size(), "a promise file per process: " + promises);
            for (final Path file : promises)
            {
                final String name = file.getFileName().toString();
                final long promised = RelayLogFile.promised(dir, name.substring(0, name.indexOf('.')));
                assertTrue(promised >= echoed * size, name + " promised " + promised + " bytes, fewer than the " +
                    echoed * size + " echoed in the measured second alone");
            }
        }
        try (Stream<Path> files = Files.list(dir))
        {
            assertEquals(3, files.filter(f -> f.toString().endsWith(".log")).count(), "a log file per process");
        }
    }

    @Test
    void theEchoWaitsForTwoOfTheThreeProcesses()
    {
        assertEquals(5, LoopbackRelay.twoOfThree(0, 5, 9), "the leader has synced nothing: the second follower");
        assertEquals(5, LoopbackRelay.twoOfThree(5, 0, 9), "one follower silent: the leader's and the other's");
        assertEquals(0, LoopbackRelay.twoOfThree(9, 0, 0), "the leader alone is not two of three");
        assertEquals(7, LoopbackRelay.twoOfThree(7, 7, 3));
        assertEquals(4, LoopbackRelay.twoOfThree(9, 3, 4));
    }

    @Test
    void aDurableRelayTakesOneOrTwoSyncsPerRound(@TempDir final Path dir)
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> LoopbackRelay.runDurable(1000, 288, 1, 3, dir));
        assertTrue(refused.getMessage().contains("1 or 2"), refused.getMessage());
    }
}
