package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time and resident memory of a process, from /proc (Linux).
 */
public final class ProcessStats
{
    /** Clock ticks per second of /proc/PID/stat times; 100 on Linux x86-64. */
    private static final double TICKS_PER_SECOND = 100.0;

    private ProcessStats()
    {
    }

    /**
     * @return user plus system CPU seconds used so far, or -1 if unreadable.
     */
    public static double cpuSeconds(final long pid)
    {
        try
        {
            final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // Fields after the command name, which is in parentheses and may hold spaces.
            final String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    /**
     * @return resident set size in MiB, or -1 if unreadable.
     */
    public static double rssMiB(final long pid)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")))
            {
                if (line.startsWith("VmRSS:"))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
            return -1;
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }
}
