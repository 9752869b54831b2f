package io.lockstep.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The highest rate whose p99 stays under a limit, found by bisection with one short window per step, as the
 * published comparisons do: each step runs the workload at a rate for the window and keeps the half of the range the
 * result points to. Repeated, because a short window passes or fails by luck when stalls of a few milliseconds come
 * every few seconds; the figure reported is the highest rate that passed in every search (the lowest of their
 * results). Plain Java, so it loads on the Aeron class path too.
 * <p>
 * Options, taken out of the arguments before the benchmark's own: {@code --search N} (searches; 0 or absent: no
 * search), {@code --high R} (the top of the range, default 200000 msg/s), {@code --limit-us U} (default 1000).
 */
public final class RateSearch
{
    /** One window at a rate. */
    public interface Step
    {
        /**
         * @param rate offered messages per second.
         * @return the window's p99 round trip in nanoseconds.
         * @throws Exception if the window could not be run.
         */
        long p99Ns(int rate) throws Exception;
    }

    /** Rates are tried in steps of this many messages per second, and the search stops this close. */
    private static final int GRAIN = 1000;

    private final int searches;
    private final int high;
    private final long limitNs;
    private final String[] rest;

    private RateSearch(final int searches, final int high, final long limitNs, final String[] rest)
    {
        this.searches = searches;
        this.high = high;
        this.limitNs = limitNs;
        this.rest = rest;
    }

    /**
     * @param args command-line arguments.
     * @return the search's options, and the arguments left for the benchmark ({@link #rest()}).
     */
    public static RateSearch parse(final String[] args)
    {
        int searches = 0;
        int high = 200_000;
        long limitUs = 1000;
        final List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            final boolean valued = i + 1 < args.length;
            switch (args[i])
            {
                case "--search" -> searches = valued ? Integer.parseInt(args[++i]) : -1;
                case "--high" -> high = valued ? Integer.parseInt(args[++i]) : -1;
                case "--limit-us" -> limitUs = valued ? Long.parseLong(args[++i]) : -1;
                default -> rest.add(args[i]);
            }
        }
        if (searches < 0 || high < 2 * GRAIN || limitUs <= 0)
        {
            throw new IllegalArgumentException("--search takes a number of searches (0 for none), --high a rate of " +
                "at least " + 2 * GRAIN + ", --limit-us a positive number of microseconds");
        }
        return new RateSearch(searches, high, limitUs * 1000, rest.toArray(String[]::new));
    }

    /** @return true if a search was asked for. */
    public boolean asked()
    {
        return searches > 0;
    }

    /** @return the arguments that are not the search's. */
    public String[] rest()
    {
        return rest;
    }

    /**
     * Run the searches, printing each step ({@code <system> mode=search_step ...}) and then the result
     * ({@code <system> mode=search ... rate_passed_every_search=R}).
     *
     * @param system the label of the lines.
     * @param step   runs one window.
     * @return the highest rate that passed in every search (0 if none passed).
     * @throws Exception from a step.
     */
    public int run(final String system, final Step step) throws Exception
    {
        final int[] results = new int[searches];
        for (int s = 0; s < searches; s++)
        {
            results[s] = search(system, s + 1, step);
        }
        final int everySearch = Arrays.stream(results).min().orElse(0);
        final StringBuilder each = new StringBuilder();
        for (final int r : results)
        {
            each.append(each.length() == 0 ? "" : ",").append(r);
        }
        System.out.printf(Locale.ROOT, "%s mode=search limit_us=%d searches=%d high=%d results=%s " +
            "rate_passed_every_search=%d%n", system, limitNs / 1000, searches, high, each, everySearch);
        return everySearch;
    }

    private int search(final String system, final int search, final Step step) throws Exception
    {
        // Invariant: every rate at or below passed is taken to pass, every rate at or above failed to fail.
        int passed = 0;
        int failed = high + GRAIN;
        int rate = high;
        int steps = 0;
        while (failed - passed > GRAIN && failed - passed > failed / 32)
        {
            final long p99Ns = step.p99Ns(rate);
            final boolean pass = p99Ns <= limitNs;
            steps++;
            System.out.printf(Locale.ROOT, "%s mode=search_step search=%d step=%d rate=%d p99_us=%d pass=%b%n",
                system, search, steps, rate, p99Ns / 1000, pass);
            if (pass)
            {
                passed = rate;
            }
            else
            {
                failed = rate;
            }
            rate = Math.max(GRAIN, (passed + failed) / 2 / GRAIN * GRAIN);
            if (rate <= passed || rate >= failed)
            {
                break;
            }
        }
        System.out.printf(Locale.ROOT, "%s mode=search_result search=%d steps=%d rate=%d%n", system, search, steps,
            passed);
        return passed;
    }
}
