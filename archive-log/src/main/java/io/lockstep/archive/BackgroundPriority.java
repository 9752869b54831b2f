package io.lockstep.archive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The scheduling priority of the threads that do a member's slow file work beside its own thread: here the unmapping
 * of segments readers left and, under {@code NONE}, the background force of the log; in the consensus module the
 * snapshot writes and purges. Their work comes when every member is busy at once (a segment rollover, a snapshot:
 * the same log position on every member), and at the same priority the members' threads waited behind it for a CPU
 * on a machine where members share cores. At a high nice value the scheduler gives that work the CPU time no member
 * thread wants and hands the CPU back as soon as one wakes. Measured on two cores at 25k msg/s, all four at nice 19:
 * the p99 lower in seven interleaved pairs of seven, the p99.9 and the worst latency lower in five
 * (benchmarks/results/history.md). None of them is on a commit's path: under {@code BATCH} the log's sync thread,
 * which a commit waits for, keeps its priority.
 * <p>
 * Java has no call for a thread's nice value, so a background thread runs {@code renice} on itself as it starts, or
 * before its next task if {@link #nice(int)} asked for a value after it started (Linux only: {@code /proc/thread-self}
 * names the thread). A thread already at that nice value or above is left alone. Where the command or {@code /proc}
 * is missing, or renice fails, the thread keeps its priority and the reason is logged once. The setting is the
 * JVM's: members in one process share it.
 */
public final class BackgroundPriority
{
    private static final System.Logger LOGGER = System.getLogger(BackgroundPriority.class.getName());
    /** The highest nice value Linux has. */
    public static final int MAX_NICE = 19;
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");
    private static final Path[] RENICE = { Path.of("/usr/bin/renice"), Path.of("/bin/renice") };
    /** Per thread: the nice value it last took (or tried to take), so that it runs renice once per value. */
    private static final ThreadLocal<int[]> APPLIED = ThreadLocal.withInitial(() -> new int[]{ 0 });
    private static volatile int nice;
    private static volatile boolean reported;

    private BackgroundPriority()
    {
    }

    /**
     * @param value the nice value background threads take from their next task on, in [0, {@link #MAX_NICE}];
     *              0 leaves them as they are.
     */
    public static void nice(final int value)
    {
        if (value < 0 || value > MAX_NICE)
        {
            throw new IllegalArgumentException("nice value must be in [0, " + MAX_NICE + "]: " + value);
        }
        nice = value;
    }

    /** @return the nice value background threads take (0: none). */
    public static int nice()
    {
        return nice;
    }

    /**
     * Called by a background thread before each task: the first call after {@link #nice(int)} asked for a value
     * lowers this thread's priority to it; the others only compare two ints.
     */
    public static void lowerThisThread()
    {
        final int value = nice;
        final int[] applied = APPLIED.get();
        if (0 == value || applied[0] == value)
        {
            return;
        }
        applied[0] = value;
        try
        {
            final String tid = Files.readSymbolicLink(THREAD_SELF).getFileName().toString();
            if (currentNice() >= value)
            {
                return; // never raise a thread's priority: an operator may have lowered the whole process
            }
            final Path renice = reniceCommand();
            if (null == renice)
            {
                report("no renice command in /usr/bin or /bin");
                return;
            }
            final Process process = new ProcessBuilder(renice.toString(), "-n", Integer.toString(value), "-p", tid)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                report("renice did not finish in 10 s");
            }
            else if (0 != process.exitValue())
            {
                report("renice exited with " + process.exitValue());
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            report(ex.toString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the calling thread's nice value, from field 19 of {@code /proc/thread-self/stat}. */
    static int currentNice() throws IOException
    {
        final String stat = Files.readString(THREAD_SELF.resolve("stat"), StandardCharsets.US_ASCII);
        // The name, field 2, is in parentheses and may hold spaces: count fields after its closing one.
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(fields[19 - 3]);
    }

    private static Path reniceCommand()
    {
        for (final Path candidate : RENICE)
        {
            if (Files.isExecutable(candidate))
            {
                return candidate;
            }
        }
        return null;
    }

    private static void report(final String reason)
    {
        if (!reported)
        {
            reported = true;
            LOGGER.log(System.Logger.Level.INFO, "background threads keep their scheduling priority ({0}): on a " +
                "machine where members share cores, snapshots and segment rollovers then cost more latency", reason);
        }
    }
}
