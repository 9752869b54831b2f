package io.lockstep.benchmarks;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bisection finds the edge of a system whose p99 crosses the limit at a known rate, to within its grain, and
 * reports the rate that passed in every search.
 */
class RateSearchTest
{
    @Test
    void findsTheEdgeWithinAThirtySecondOfTheRangeAndKeepsTheLowestOfTheSearches() throws Exception
    {
        final RateSearch search = RateSearch.parse(new String[]{ "--search", "3", "--seconds", "5", "--high",
            "200000" });
        assertEquals(List.of("--seconds", "5"), List.of(search.rest()));
        final int[] edges = { 47_300, 51_000, 44_900 };
        final List<Integer> tried = new ArrayList<>();
        final int[] call = { 0 };
        final int[] searchOf = { 0 };
        final int result = search.run("test", rate ->
        {
            if (rate == 200_000 && !tried.isEmpty())
            {
                searchOf[0]++; // each search starts at the top of the range
            }
            tried.add(rate);
            call[0]++;
            return rate < edges[searchOf[0]] ? 400_000 : 1_600_000;
        });
        assertTrue(result <= 44_900 && result > 44_900 - 200_000 / 32, "the lowest search's edge: " + result);
        assertTrue(call[0] <= 3 * 10, "bisection, not a sweep: " + call[0] + " windows");
        assertTrue(tried.stream().allMatch(r -> r % 1000 == 0), "rates in whole thousands: " + tried);
    }

    @Test
    void aSystemThatPassesAtTheTopReportsTheTopAndOneThatNeverPassesReportsZero() throws Exception
    {
        final RateSearch search = RateSearch.parse(new String[]{ "--search", "1", "--high", "100000" });
        assertEquals(100_000, search.run("test", rate -> 10_000));
        assertEquals(0, search.run("test", rate -> 5_000_000));
    }

    @Test
    void noSearchUnlessAskedAndBadOptionsAreNamed()
    {
        assertTrue(!RateSearch.parse(new String[]{ "--rates", "1000" }).asked());
        assertThrows(IllegalArgumentException.class, () -> RateSearch.parse(new String[]{ "--search" }));
        assertThrows(IllegalArgumentException.class, () -> RateSearch.parse(new String[]{ "--high", "10" }));
    }
}
