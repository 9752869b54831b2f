package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A writer in its own JVM is killed with SIGKILL at random moments, many times. After each kill the log, verified
 * read-only, must hold every frame the writer had reported durable, and every frame it holds must be exactly the one
 * written at its index (never torn, never corrupt). The next writer then recovers the same directory and carries on.
 * Iterations: {@code -Dlockstep.crash.iterations=N} (default 12); replay timings with {@code -Dlockstep.crash.seed=N}.
 */
class CrashRecoveryTest
{
    private static final long CONTENT_SEED = 7;

    @TempDir
    Path dir;

    static ArchiveLogConfig config(final Path dir)
    {
        // Small segments and batches so that a short run crosses many segment ends and batch splits.
        return new ArchiveLogConfig().directory(dir).segmentLength(128 * 1024).maxBatchLength(16 * 1024);
    }

    static byte[] payload(final long seed, final long index)
    {
        return TestFrames.payload(seed, index, TestFrames.lengthFor(seed, index, 1500));
    }

    @Test
    void killedWriterNeverLosesADurableFrameNorLeavesACorruptOne() throws Exception
    {
        final int iterations = Integer.getInteger("lockstep.crash.iterations", 12);
        final String fixedSeed = System.getProperty("lockstep.crash.seed");
        final long seed = null != fixedSeed ? Long.parseLong(fixedSeed) : System.nanoTime();
        final Random random = new Random(seed);
        long lastVerifiedFrames = 0;
        int tornTails = 0;
        for (int i = 0; i < iterations; i++)
        {
            final DurabilityPolicy durability = i % 2 == 0 ? DurabilityPolicy.BATCH : DurabilityPolicy.NONE;
            final long runMs = 30 + random.nextInt(400);
            final String context = "iteration " + i + " (" + durability + ", killed after " + runMs + " ms, seed " +
                seed + ")";
            final long[] promised = runAndKill(durability, runMs, context);

            final List<Long> positions = new ArrayList<>();
            final long[] count = { 0 };
            final RecoveryReport report = ArchiveLog.verify(dir, (buffer, offset, length, position, term, type) ->
            {
                final byte[] expected = payload(CONTENT_SEED, count[0]);
                assertTrue(Arrays.equals(expected, TestFrames.bytes(buffer, offset, length)),
                    context + ": frame " + count[0] + " at " + position + " is not what was written");
                positions.add(position);
                count[0]++;
            });
            tornTails += report.hasTornTail() ? 1 : 0;
            assertTrue(report.endPosition() >= promised[0], context + ": recovered end " + report.endPosition() +
                " is below the reported durable position " + promised[0]);
            assertTrue(count[0] >= promised[1], context + ": " + count[0] + " frames recovered, " + promised[1] +
                " were reported durable");
            assertTrue(count[0] >= lastVerifiedFrames, context + ": frames verified earlier were lost");
            lastVerifiedFrames = count[0];
        }
        System.out.println("crash test: " + iterations + " kills, " + lastVerifiedFrames + " frames, " + tornTails +
            " torn tails cut");
        assertTrue(lastVerifiedFrames > 0, "the writers wrote something");
    }

    /**
     * @return {durable position, durable frame count} last reported before the kill.
     */
    private long[] runAndKill(final DurabilityPolicy durability, final long runMs,
        final String context) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final List<String> command = new ArrayList<>(List.of(java,
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"),
            CrashWriter.class.getName(), dir.toString(), Long.toString(CONTENT_SEED), durability.name()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final AtomicLong durablePosition = new AtomicLong();
        final AtomicLong durableFrames = new AtomicLong();
        final AtomicLong ready = new AtomicLong(-1);
        final StringBuilder otherOutput = new StringBuilder();
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = reader.readLine()))
                {
                    final String[] parts = line.split(" ");
                    if (parts.length == 3 && parts[0].equals("durable"))
                    {
                        durablePosition.set(Long.parseLong(parts[1]));
                        durableFrames.set(Long.parseLong(parts[2]));
                    }
                    else if (parts.length == 3 && parts[0].equals("ready"))
                    {
                        durablePosition.set(Long.parseLong(parts[1]));
                        durableFrames.set(Long.parseLong(parts[2]));
                        ready.set(System.nanoTime());
                    }
                    else if (otherOutput.length() < 10_000)
                    {
                        otherOutput.append(line).append('\n');
                    }
                }
            }
            catch (final Exception ignore)
            {
                // The stream closes when the process dies.
            }
        }, "crash-writer-output");
        pump.start();

        final long readyDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ready.get() < 0 && process.isAlive() && System.nanoTime() < readyDeadline)
        {
            Thread.onSpinWait();
            Thread.yield();
        }
        assertTrue(ready.get() >= 0, context + ": writer never became ready:\n" + otherOutput);
        final long killAt = ready.get() + TimeUnit.MILLISECONDS.toNanos(runMs);
        while (System.nanoTime() < killAt && process.isAlive())
        {
            Thread.yield();
        }
        assertTrue(process.isAlive(), context + ": writer died by itself:\n" + otherOutput);

        process.destroyForcibly(); // SIGKILL on Linux: no shutdown hooks, no close, no flush
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), context + ": writer did not die");
        assertEquals(137, process.exitValue(), context + ": killed by SIGKILL");
        pump.join(TimeUnit.SECONDS.toMillis(30));
        return new long[]{ durablePosition.get(), durableFrames.get() };
    }
}
