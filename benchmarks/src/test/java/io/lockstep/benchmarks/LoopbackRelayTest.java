package io.lockstep.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
    void aDurableRelayEchoesEveryMessageOnceAndOnlyWhatTwoOfItsThreeProcessesHaveSynced(@TempDir final Path dir)
        throws Exception
    {
        final int rate = 2000;
        final int size = 288;
        final LoopbackRelay.Result result = LoopbackRelay.runDurable(rate, size, 1, 2, dir);

        final long echoed = result.latency().roundTrip.getTotalCount();
        assertTrue(echoed <= rate && echoed >= rate - 20, "echoed " + echoed + " of " + rate);
        // Each process kept a promise of what it had synced: the warm-up and the measured second, as far as it got.
        // An echo needs two of the three, so at least two promises cover every echoed message.
        final List<Long> promised = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path file : files.filter(f -> f.toString().endsWith(".promise")).toList())
            {
                final String name = file.getFileName().toString();
                promised.add(RelayLogFile.promised(dir, name.substring(0, name.length() - ".promise".length())));
            }
        }
        assertEquals(3, promised.size(), "a promise file per process: " + promised);
        final long echoedBytes = echoed * size;
        assertTrue(promised.stream().filter(p -> p >= echoedBytes).count() >= 2,
            "two of three processes promised at least the " + echoedBytes + " bytes echoed: " + promised);
        try (Stream<Path> files = Files.list(dir))
        {
            assertEquals(3, files.filter(f -> f.toString().endsWith(".log")).count(), "a log file per process");
        }
    }

    @Test
    void aDurableRelayTakesOneOrTwoSyncsPerRound(@TempDir final Path dir)
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> LoopbackRelay.runDurable(1000, 288, 1, 3, dir));
        assertTrue(refused.getMessage().contains("1 or 2"), refused.getMessage());
    }
}
