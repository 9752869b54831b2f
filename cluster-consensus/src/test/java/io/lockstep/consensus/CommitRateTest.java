package io.lockstep.consensus;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CommitRateTest
{
    private static final long MS = 1_000_000L;

    @Test
    void thePeakOfTheRecentSecondsIsKeptAndOlderOnesAgeOut()
    {
        final CommitRate rate = new CommitRate();
        assertEquals(0, rate.peakBytesPerSecond(), "nothing seen");
        long commit = 0;
        // One second at 10,000 bytes a second, then eleven at 1,000: the burst is forgotten after ten windows.
        for (long t = 0; t <= 1000; t += 100)
        {
            rate.onCommitSeen(t * MS, commit);
            commit += 1000;
        }
        assertEquals(10_000, rate.peakBytesPerSecond(), 100);
        for (long t = 1100; t <= 12_000; t += 100)
        {
            commit += 100;
            rate.onCommitSeen(t * MS, commit);
        }
        assertEquals(1_000, rate.peakBytesPerSecond(), 50);
    }

    @Test
    void aPartialWindowCountsOnceLongEnoughSoAFreshBurstIsNotMissed()
    {
        final CommitRate rate = new CommitRate();
        rate.onCommitSeen(0, 0);
        rate.onCommitSeen(50 * MS, 5_000);
        assertEquals(0, rate.peakBytesPerSecond(), "50 ms is too short to call a rate");
        rate.onCommitSeen(200 * MS, 20_000);
        assertEquals(100_000, rate.peakBytesPerSecond(), 1);
    }

    @Test
    void aCommitPositionGoingBackStartsAgain()
    {
        final CommitRate rate = new CommitRate();
        rate.onCommitSeen(0, 1_000_000);
        rate.onCommitSeen(500 * MS, 10);
        rate.onCommitSeen(1600 * MS, 1_010);
        assertEquals(909, rate.peakBytesPerSecond(), 1, "measured from the new leader's position only");
    }
}
