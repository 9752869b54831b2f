package io.lockstep.archive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The scheduling priority of the threads that do a member's slow file work beside its own thread: here the unmapping
 * of segments readers left and, under {@code NONE}, the background force of the log; in the consensus module the
 * snapshot writes and purges. Their work comes when every member is busy at once (a segment rollover, a snapshot:
 * the same log position on every member), and at the same priority the members' threads waited behind it for a CPU
 * on a machine where members share cores. At a high nice value the scheduler gives that work the CPU time no member
 * thread wants and hands the CPU back as soon as one wakes. Measured on two cores at 25k msg/s with all four lowered
 * to 19: the p99 lower in seven interleaved pairs of seven, the p99.9 and the worst latency in five; with the
 * background force left out, no difference (benchmarks/results/history.md). None of them is on a commit's path:
 * under {@code BATCH} the log's sync thread, which a commit waits for, keeps its priority. Nice ranks threads within
 * one scheduling group (a cgroup, or an autogroup per session): a member alone in its container ranks only its own
 * threads by it.
 * <p>
 * Java has no call for a thread's nice value and a native library for one call is not worth a dependency, so a
 * background thread runs {@code renice} on itself: an executor's thread ({@link #singleThreadExecutor}) as it starts
 * and again before a task if {@link #nice(int)} asked for another value since, the log's background force as it
 * starts. Linux only: {@code /proc/thread-self} names the thread, and its process must be this JVM (a /proc of
 * another pid namespace would name another process). A thread already at that nice value or above is left alone.
 * Where any of that is missing, or renice fails, the thread keeps its priority and the first reason is logged. The
 * setting is the JVM's: members in one process share it.
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

    /**
     * A single daemon thread for background file work, already running, that lowers its priority as it starts and
     * before a task if the value changed since: what a storage class hands its slow work to.
     *
     * @param name the thread's name.
     * @return the executor; tasks run in the order handed over.
     */
    public static ExecutorService singleThreadExecutor(final String name)
    {
        final ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(), runnable ->
            {
                // Lowered as it starts (with the member, if the value is known by then), not inside the first
                // rollover, snapshot or purge: renice is a process.
                final Thread thread = new Thread(() ->
                {
                    lowerThisThread();
                    runnable.run();
                }, name);
                thread.setDaemon(true);
                return thread;
            })
        {
            @Override
            protected void beforeExecute(final Thread thread, final Runnable task)
            {
                lowerThisThread();
            }
        };
        executor.prestartAllCoreThreads();
        return executor;
    }

    /**
     * Lower the calling thread's priority to the value asked for, once per value; otherwise only two ints are
     * compared. Never throws: a thread that cannot be lowered still does its work.
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
            final Path self = Files.readSymbolicLink(THREAD_SELF); // "<pid>/task/<tid>"
            if (self.getNameCount() != 3 || !self.getName(0).toString().equals(
                Long.toString(ProcessHandle.current().pid())))
            {
                report("/proc/thread-self is " + self + ", not a thread of this process (another pid namespace?)");
                return;
            }
            if (currentNice() >= value)
            {
                return; // never raise a thread's priority: an operator may have lowered the whole process
            }
            renice(value, self.getName(2).toString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final Throwable ex)
        {
            // Even an Error (no native thread left for the process's reaper): the thread's work matters more than
            // its priority, and a background executor whose thread died here would never run a task again.
            try
            {
                report(ex.toString());
            }
            catch (final Throwable reportFailed)
            {
                // Out of memory even for the message: the work still goes on.
            }
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

    private static void renice(final int value, final String tid) throws IOException, InterruptedException
    {
        final Path command = reniceCommand();
        if (null == command)
        {
            report("no renice command in /usr/bin or /bin");
            return;
        }
        // The value without -n: util-linux and BusyBox both take that as absolute (-n is an increment in POSIX and
        // BusyBox, and in util-linux under POSIXLY_CORRECT); no environment, so nothing changes that reading.
        final ProcessBuilder builder = new ProcessBuilder(command.toString(), Integer.toString(value), "-p", tid)
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().clear();
        final Process process = builder.start();
        if (!process.waitFor(10, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            report("renice did not finish in 10 s");
        }
        else if (currentNice() < value)
        {
            report("renice exited with " + process.exitValue() + " and left the thread at nice " + currentNice());
        }
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
