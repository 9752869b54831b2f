package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A random byte flip anywhere below the end of the log is always detected: verification throws naming the file and
 * position, or (only within one write batch of the end, where damage cannot be told from a torn write) reports a torn
 * tail. Opening and reading then never hands out a frame that differs from what was written. Replay a seed with
 * {@code -Dlockstep.corruption.seed=N}; more flips with {@code -Dlockstep.corruption.flips=N}.
 */
class LogCorruptionTest
{
    private static final long WRITE_SEED = 42;

    @TempDir
    Path dir;

    @Test
    void everyFlippedByteIsDetected() throws Exception
    {
        final Path pristine = dir.resolve("pristine");
        final List<TestFrames.Frame> written = new ArrayList<>();
        final long end;
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(pristine)))
        {
            for (int i = 0; i < 1500; i++)
            {
                final byte[] payload = TestFrames.payload(WRITE_SEED, i, TestFrames.lengthFor(WRITE_SEED, i, 700));
                final long frameEnd = TestFrames.append(log, 1 + i / 300, 1, payload);
                written.add(new TestFrames.Frame(frameEnd - FrameDescriptor.alignedFrameLength(payload.length),
                    1 + i / 300, 1, payload));
            }
            end = log.flush();
        }
        final int segmentLength = TestFrames.config(pristine).segmentLength();

        final String fixedSeed = System.getProperty("lockstep.corruption.seed");
        final long seed = null != fixedSeed ? Long.parseLong(fixedSeed) : System.nanoTime();
        final int flips = null != fixedSeed ? 1 : Integer.getInteger("lockstep.corruption.flips", 300);
        final Random random = new Random(seed);
        int corruptions = 0;
        int tornTails = 0;
        for (int n = 0; n < flips; n++)
        {
            final long flipSeed = random.nextLong();
            final long position = Math.floorMod(flipSeed, end);
            final Path copy = dir.resolve("copy");
            copyLog(pristine, copy);
            ArchiveLogTest.flipByte(copy.resolve(SegmentFiles.name(position - position % segmentLength)),
                position % segmentLength);
            final String context = "flip at position " + position + " (seed " + seed + ", flip " + n + ")";
            try
            {
                final RecoveryReport report = ArchiveLog.verify(copy, null);
                assertTrue(report.hasTornTail(), "undetected " + context);
                // Every byte below the end was flushed and promised: damage there is never taken for a torn write.
                assertTrue(report.lostPromisedFrames(), "damage below the promise called a torn tail: " + context);
                assertTrue(report.tornTailPosition() <= position, context);
                tornTails++;
            }
            catch (final ArchiveException ex)
            {
                assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason(), context);
                assertTrue(ex.position() <= position && null != ex.file(), context + ": " + ex.getMessage());
                corruptions++;
            }
            checkNothingWrongIsServed(copy, written, context);
        }
        System.out.println("corruption test: " + flips + " flips, " + corruptions + " reported as corruption, " +
            tornTails + " as damage below the promise, cut there and owed (seed " + seed + ")");
        assertEquals(flips, corruptions + tornTails);
    }

    private static void checkNothingWrongIsServed(final Path copy, final List<TestFrames.Frame> written,
        final String context)
    {
        final ArchiveLog log;
        try
        {
            log = ArchiveLog.open(TestFrames.config(copy));
        }
        catch (final ArchiveException ex)
        {
            return;
        }
        try (log)
        {
            final List<TestFrames.Frame> read = new ArrayList<>();
            try (LogReader reader = log.newReader(0))
            {
                while (reader.poll((buffer, offset, length, position, term, type) -> read.add(
                    new TestFrames.Frame(position, term, type, TestFrames.bytes(buffer, offset, length))),
                    Long.MAX_VALUE, 100) > 0)
                {
                }
            }
            catch (final ArchiveException ex)
            {
                assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason(), context);
            }
            for (int i = 0; i < read.size(); i++)
            {
                assertEquals(written.get(i).position(), read.get(i).position(), context);
                assertArrayEquals(written.get(i).payload(), read.get(i).payload(), context);
            }
        }
        catch (final ArchiveException ex)
        {
            fail(context + ": " + ex);
        }
    }

    private static void copyLog(final Path from, final Path to) throws Exception
    {
        if (Files.exists(to))
        {
            try (var files = Files.list(to))
            {
                for (final Path p : files.toList())
                {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(to);
        try (var files = Files.list(from))
        {
            for (final Path p : files.toList())
            {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }
}
