package io.lockstep.benchmarks;

import org.junit.jupiter.api.Test;

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
}
