package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import static io.lockstep.cluster.transport.SelectorIdleStrategy.MISSES_TO_SKIP;
import static io.lockstep.cluster.transport.SelectorIdleStrategy.PROBE_INTERVAL;
import static org.junit.jupiter.api.Assertions.assertEquals;

class SelectorIdleStrategyTest
{
    private static final int SPINS = 10;
    private static final int YIELDS = 1;
    /** idle() calls of a period that spins and yields in full: the spins, the yields, then the wait. */
    private static final int FULL_PERIOD = SPINS + YIELDS + 1;

    private int waits;
    private final SelectorIdleStrategy idle = new SelectorIdleStrategy(timeoutMs -> waits++, SPINS, YIELDS, 1);

    /** One idle period whose work comes only in the selector: how many idle() calls it took to get there. */
    private int periodEndingInTheSelector()
    {
        final int before = waits;
        int calls = 0;
        while (waits == before)
        {
            idle.idle(0);
            calls++;
        }
        idle.idle(1);
        return calls;
    }

    /** One idle period whose work is found by the given spin (1-based), before any wait. */
    private void periodEndingInASpin(final int spin)
    {
        final int before = waits;
        for (int i = 0; i < spin; i++)
        {
            idle.idle(0);
        }
        assertEquals(before, waits, "the work came before the period reached the selector");
        idle.idle(1);
    }

    @Test
    void spinsThatKeepFindingNothingAreSkippedExceptForAProbe()
    {
        for (int i = 0; i < MISSES_TO_SKIP; i++)
        {
            assertEquals(FULL_PERIOD, periodEndingInTheSelector(), "period " + i + " spins before it waits");
        }
        for (int round = 0; round < 3; round++)
        {
            for (int i = 1; i < PROBE_INTERVAL; i++)
            {
                assertEquals(1, periodEndingInTheSelector(), "a skipping period waits at its first idle");
            }
            assertEquals(FULL_PERIOD, periodEndingInTheSelector(), "one period in " + PROBE_INTERVAL + " probes");
        }
    }

    @Test
    void workFoundByAProbeBringsTheSpinsBackForEveryPeriod()
    {
        for (int i = 0; i < MISSES_TO_SKIP + PROBE_INTERVAL - 2; i++)
        {
            periodEndingInTheSelector();
        }
        assertEquals(1, periodEndingInTheSelector(), "the last skipping period before the probe");

        periodEndingInASpin(SPINS);

        for (int i = 0; i < MISSES_TO_SKIP; i++)
        {
            assertEquals(FULL_PERIOD, periodEndingInTheSelector(), "period " + i + " after the probe found work");
        }
        assertEquals(1, periodEndingInTheSelector(), "skipping again after as many misses in a row");
    }

    @Test
    void spinsThatFindWorkNowAndThenAreNeverSkipped()
    {
        for (int round = 0; round < 10; round++)
        {
            for (int i = 0; i < MISSES_TO_SKIP - 1; i++)
            {
                assertEquals(FULL_PERIOD, periodEndingInTheSelector(), "round " + round + ", period " + i);
            }
            periodEndingInASpin(3);
        }
    }

    @Test
    void backToBackWorkDoesNotCountAsAMissOrAFind()
    {
        for (int i = 0; i < MISSES_TO_SKIP; i++)
        {
            periodEndingInTheSelector();
            idle.idle(1);
            idle.idle(1);
        }
        assertEquals(1, periodEndingInTheSelector(), "duty cycles with work between the periods change nothing");
    }

    @Test
    void aWaitThatTimesOutStaysInTheSamePeriod()
    {
        for (int i = 0; i < MISSES_TO_SKIP; i++)
        {
            periodEndingInTheSelector();
        }
        final int before = waits;
        for (int i = 0; i < 5; i++)
        {
            idle.idle(0);
        }
        assertEquals(before + 5, waits, "every idle of a skipping period past its first is a wait");
    }
}
