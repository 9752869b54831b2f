package io.lockstep.consensus;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AppendTimesTest
{
    private final AppendTimes times = new AppendTimes();

    @Test
    void lagIsTheAgeOfTheFirstByteTheFollowerLacks()
    {
        times.onAppended(100, 10);
        times.onAppended(200, 20);
        times.onAppended(200, 25);
        times.onAppended(300, 30);
        assertEquals(40, times.lagNs(0, 300, 50), "lacks from the start: since 10");
        assertEquals(30, times.lagNs(150, 300, 50), "first lacks bytes that arrived with 200, at 20");
        assertEquals(30, times.lagNs(100, 300, 50));
        assertEquals(20, times.lagNs(200, 300, 50), "the repeated 200 was not a new sample");
        assertEquals(0, times.lagNs(300, 300, 50), "has it all");
        times.clear();
        assertEquals(0, times.lagNs(0, 300, 50), "nothing known in a new term");
    }

    @Test
    void aFollowerBehindEverySampleKeptLagsSinceTheOldest()
    {
        for (int i = 1; i <= 3 * AppendTimes.CAPACITY; i++)
        {
            times.onAppended(i * 10L, i);
        }
        final long oldestKept = 2L * AppendTimes.CAPACITY + 1;
        assertEquals(10_000 - oldestKept, times.lagNs(0, 30L * AppendTimes.CAPACITY, 10_000));
        assertEquals(10_000 - 3L * AppendTimes.CAPACITY, times.lagNs(30L * AppendTimes.CAPACITY - 5,
            30L * AppendTimes.CAPACITY, 10_000));
    }
}
