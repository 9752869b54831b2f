package io.lockstep.benchmarks;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * The options shared by the cluster benchmarks, parsed once: {@code --rates 1000,10000} (or {@code --rate}),
 * {@code --seconds S} (or {@code --duration}), {@code --warmup S}, {@code --prewarm S}, {@code --size B},
 * {@code --durability none|batch},
 * {@code --out DIR}. Each benchmark uses the ones that apply to it. Plain Java, so it loads on the Aeron classpath too.
 *
 * @param rates      offered rates in messages per second.
 * @param seconds    measured seconds per rate.
 * @param warmup     warm-up seconds before measuring.
 * @param size       message size in bytes.
 * @param durability Lockstep's durability policy for the members.
 * @param out        where histograms and plots go.
 * @param prewarm    seconds at 10k msg/s on a fresh cluster before the first rate, not measured ({@code --prewarm S}):
 *                   the first rate of a sweep otherwise measures the JIT compiling the members. Measured: 1k msg/s
 *                   first on a fresh cluster, p99 1.7-3.9 ms; the same 1k after 5k, 2k and 3k in the same run, 428 us.
 */
public record BenchmarkOptions(int[] rates, int seconds, int warmup, int size, String durability, Path out, int prewarm)
{
    /**
     * Options without a pre-warm.
     */
    public BenchmarkOptions(
        final int[] rates, final int seconds, final int warmup, final int size, final String durability, final Path out)
    {
        this(rates, seconds, warmup, size, durability, out, 0);
    }

    /**
     * @param args     command-line arguments.
     * @param defaults the benchmark's defaults.
     * @return the options, defaults overridden by the arguments.
     */
    public static BenchmarkOptions parse(final String[] args, final BenchmarkOptions defaults)
    {
        int[] rates = defaults.rates;
        int seconds = defaults.seconds;
        int warmup = defaults.warmup;
        int prewarm = defaults.prewarm;
        int size = defaults.size;
        String durability = defaults.durability;
        Path out = defaults.out;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--rates", "--rate" -> rates = Arrays.stream(args[i + 1].split(","))
                    .mapToInt(r -> Integer.parseInt(r.trim())).toArray();
                case "--seconds", "--duration" -> seconds = Integer.parseInt(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--prewarm" -> prewarm = Integer.parseInt(args[i + 1]);
                case "--size" -> size = Integer.parseInt(args[i + 1]);
                case "--durability" -> durability = args[i + 1];
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "; options: --rates, " +
                    "--seconds, --warmup, --prewarm, --size, --durability, --out");
            }
        }
        if (size < 16)
        {
            throw new IllegalArgumentException("--size must be at least 16");
        }
        return new BenchmarkOptions(rates, seconds, warmup, size, durability, out, prewarm);
    }
}
