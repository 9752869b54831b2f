package io.lockstep.benchmarks;

import java.util.Arrays;
import java.util.Locale;

/**
 * How often this machine takes the CPU away from a thread that never gives it up, and for how long (a jHiccup-style
 * meter): one thread reads the clock in a loop and records every gap over {@value #GAP_NS} ns. On an idle machine a
 * gap is time the thread was not running: the kernel's own threads, the hypervisor taking the virtual CPU. From the
 * gaps it derives the floor a server that costs nothing would see: message i, sent at i / rate, waits for the end of
 * the gap it falls into. A cluster message crosses several threads in turn, so its floor is higher still.
 */
final class MachineStalls
{
    static final long GAP_NS = 100_000;
    private static final int MAX_GAPS = 1 << 20;

    private final long[] gapStart = new long[MAX_GAPS];
    private final long[] gapEnd = new long[MAX_GAPS];
    private int gaps;
    private long windowNs;

    /**
     * Spin for the given time (after one second not measured, for the JIT) and keep every gap.
     */
    MachineStalls measure(final double seconds)
    {
        final long warmEnd = System.nanoTime() + 1_000_000_000L;
        while (System.nanoTime() < warmEnd)
        {
            Thread.onSpinWait();
        }
        final long start = System.nanoTime();
        final long end = start + (long)(seconds * 1e9);
        long previous = start;
        while (previous < end)
        {
            final long now = System.nanoTime();
            if (now - previous > GAP_NS && gaps < MAX_GAPS)
            {
                gapStart[gaps] = previous - start;
                gapEnd[gaps] = now - start;
                gaps++;
            }
            previous = now;
        }
        windowNs = previous - start;
        return this;
    }

    /** For tests: a gap as the meter would have recorded it, in ns from the start of the window. */
    MachineStalls gap(final long startNs, final long endNs)
    {
        gapStart[gaps] = startNs;
        gapEnd[gaps] = endNs;
        gaps++;
        windowNs = Math.max(windowNs, endNs);
        return this;
    }

    /** For tests: the length of the measured window. */
    MachineStalls window(final long ns)
    {
        windowNs = ns;
        return this;
    }

    /** @return gaps longer than the bound per second. */
    double perSecondOver(final long boundNs)
    {
        int n = 0;
        for (int i = 0; i < gaps; i++)
        {
            n += gapEnd[i] - gapStart[i] > boundNs ? 1 : 0;
        }
        return n / (windowNs / 1e9);
    }

    long maxGapNs()
    {
        long max = 0;
        for (int i = 0; i < gaps; i++)
        {
            max = Math.max(max, gapEnd[i] - gapStart[i]);
        }
        return max;
    }

    /** @return share of the window the thread did not run, in percent. */
    double lostPercent()
    {
        long lost = 0;
        for (int i = 0; i < gaps; i++)
        {
            lost += gapEnd[i] - gapStart[i];
        }
        return 100.0 * lost / windowNs;
    }

    /**
     * @return the latency at the percentile of messages sent at the rate through a server that costs nothing and runs
     * on the measured thread: each waits only for the end of the gap it is sent in.
     */
    long floorNs(final int rate, final double percentile)
    {
        final long interval = 1_000_000_000L / rate;
        final int messages = (int)(windowNs / interval);
        final long[] delayed = new long[messages];
        int n = 0;
        for (int i = 0; i < gaps; i++)
        {
            // Messages due inside gap i: from the first at or after its start to the last before its end.
            for (long t = (gapStart[i] + interval - 1) / interval * interval; t < gapEnd[i]; t += interval)
            {
                if (n < messages)
                {
                    delayed[n++] = gapEnd[i] - t;
                }
            }
        }
        // 1-based rank among all messages; the tolerance keeps 99.9% of 1000 at 999, not 1000 by rounding.
        final long rank = (long)Math.ceil(percentile * messages / 100.0 - 1e-9);
        final long undelayed = messages - n;
        if (rank <= undelayed)
        {
            return 0;
        }
        final long[] sorted = Arrays.copyOf(delayed, n);
        Arrays.sort(sorted);
        return sorted[(int)Math.min(n - 1, rank - undelayed - 1)];
    }

    String summary(final int[] rates)
    {
        final StringBuilder floors = new StringBuilder();
        for (final int rate : rates)
        {
            floors.append(String.format(Locale.ROOT, " floor_p99_us_at_%d=%d", rate, floorNs(rate, 99) / 1000));
        }
        return String.format(Locale.ROOT, "machine mode=stalls seconds=%.0f stalls_over_1ms_per_s=%.2f " +
            "stalls_over_100us_per_s=%.1f max_stall_us=%d lost_pct=%.2f%s", windowNs / 1e9, perSecondOver(1_000_000),
            perSecondOver(GAP_NS), maxGapNs() / 1000, lostPercent(), floors);
    }
}
