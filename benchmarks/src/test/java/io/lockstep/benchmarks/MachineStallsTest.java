package io.lockstep.benchmarks;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MachineStallsTest
{
    private static final long MS = 1_000_000;

    @Test
    void aMessageSentInAStallWaitsForItsEndAndTheRestDoNot()
    {
        // One second, one 5 ms stall from 500 ms: at 1k msg/s the messages due at 500..504 ms wait 5..1 ms.
        final MachineStalls stalls = new MachineStalls().window(1000 * MS).gap(500 * MS, 505 * MS);
        assertEquals(0, stalls.floorNs(1000, 99), "995 of 1000 are not delayed");
        assertEquals(4 * MS, stalls.floorNs(1000, 99.9));
        assertEquals(5 * MS, stalls.floorNs(1000, 100));
        assertEquals(1.0, stalls.perSecondOver(MS), 1e-9);
        assertEquals(5 * MS, stalls.maxGapNs());
        assertEquals(0.5, stalls.lostPercent(), 1e-9);
    }

    @Test
    void aLongStallAtAHighRateSetsTheP99()
    {
        // A 20 ms stall at 10k msg/s delays 200 of 10,000 messages by 0.1..20 ms: the 9,900th is the 100th of them.
        final MachineStalls stalls = new MachineStalls().window(1000 * MS).gap(500 * MS, 520 * MS);
        assertEquals(10 * MS, stalls.floorNs(10_000, 99));
        assertEquals(0, stalls.floorNs(1000, 97), "20 of 1000 delayed at 1k msg/s: 3% is not reached");
    }
}
