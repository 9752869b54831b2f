package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * One rate's result, the same for every system measured: the readable line, the key=value line, and the saved
 * histogram. Uses only HdrHistogram and /proc, so it runs on Lockstep's classpath and on Aeron's alike.
 */
public final class LatencyReport
{
    private final String system;
    private final long[] pids;
    private final double[] cpuBefore;
    private long measureFromNs;

    /**
     * @param system  name that starts the key=value line ("lockstep", "aeron").
     * @param pids    member process ids, then the client's.
     */
    public LatencyReport(final String system, final long[] pids)
    {
        this.system = system;
        this.pids = pids.clone();
        this.cpuBefore = new double[pids.length];
    }

    /**
     * Mark the start of the measured window (CPU readings are taken from here).
     */
    public void start(final long nowNs)
    {
        measureFromNs = nowNs;
        for (int i = 0; i < pids.length; i++)
        {
            cpuBefore[i] = ProcessStats.cpuSeconds(pids[i]);
        }
    }

    /**
     * Print and save the result.
     *
     * @param extra more key=value pairs for the machine-readable line (starting with a space), or "".
     */
    public void finish(
        final Histogram histogram, final int rate, final int size, final long received, final long sent,
        final Path out, final String extra) throws IOException
    {
        final double elapsedS = (System.nanoTime() - measureFromNs) / 1e9;
        final StringBuilder processes = new StringBuilder();
        double totalCpu = 0;
        double maxRss = 0;
        double membersCpuUsPerMessage = 0;
        for (int i = 0; i < pids.length; i++)
        {
            final boolean client = i == pids.length - 1;
            final String name = client ? "client" : "member" + i;
            final double cpuSeconds = ProcessStats.cpuSeconds(pids[i]) - cpuBefore[i];
            final double cpuPct = 100 * cpuSeconds / elapsedS;
            // CPU per message, from the process accounting: the figure this machine's noise does not move.
            final double cpuUsPerMessage = received > 0 ? cpuSeconds * 1e6 / received : -1;
            final double rss = ProcessStats.rssMiB(pids[i]);
            totalCpu += cpuPct;
            membersCpuUsPerMessage += client ? 0 : cpuUsPerMessage;
            maxRss = client ? maxRss : Math.max(maxRss, rss);
            processes.append(String.format(Locale.ROOT, " %s_cpu_pct=%.0f %s_cpu_us_per_msg=%.1f %s_rss_mb=%.0f",
                name, cpuPct, name, cpuUsPerMessage, name, rss));
        }
        processes.append(String.format(Locale.ROOT, " members_cpu_us_per_msg=%.1f", membersCpuUsPerMessage));
        final Path hdr = out.resolve(system + "-latency-" + rate + ".hdr");
        try (PrintStream log = new PrintStream(new File(hdr.toString())))
        {
            new HistogramLogWriter(log).outputIntervalHistogram(histogram);
        }
        final double achieved = received / elapsedS;
        System.out.printf(Locale.ROOT, "rate=%d: p50=%.0f p90=%.0f p99=%.0f p99.9=%.0f p99.99=%.0f max=%.0f us, " +
            "achieved %.0f msg/s, CPU total %.0f%%, members' CPU %.1f us per message, member RSS max %.0f MiB%s%n",
            rate, us(histogram, 50), us(histogram, 90), us(histogram, 99), us(histogram, 99.9), us(histogram, 99.99),
            histogram.getMaxValue() / 1000.0, achieved, totalCpu, membersCpuUsPerMessage, maxRss, extra);
        System.out.printf(Locale.ROOT, "%s mode=latency rate=%d size=%d p50_us=%.0f p90_us=%.0f p99_us=%.0f " +
            "p999_us=%.0f p9999_us=%.0f max_us=%.0f achieved=%.0f sent=%d cpu_pct=%.0f%s%s hdr=%s%n", system, rate,
                size,
            us(histogram, 50), us(histogram, 90), us(histogram, 99), us(histogram, 99.9), us(histogram, 99.99),
            histogram.getMaxValue() / 1000.0, achieved, sent, totalCpu, processes, extra, hdr);
    }

    private static double us(final Histogram histogram, final double percentile)
    {
        return histogram.getValueAtPercentile(percentile) / 1000.0;
    }
}
