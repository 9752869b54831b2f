package io.lockstep.archive;

import org.agrona.IoUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Seeded damage to a whole log directory, not just its frames: every file (segments, the descriptor, the promise,
 * anything else there) may have bytes overwritten, be cut short, be deleted, grow garbage, or gain a stranger beside
 * it. Opening must then either work, serving only frames exactly as written, or fail with an {@link ArchiveException}
 * that names the problem; nothing else (no NullPointerException, no IndexOutOfBoundsException, no silent
 * nonsense). {@code -Dlockstep.logfuzz.seeds=N} (default 300), {@code -Dlockstep.logfuzz.firstSeed=S}.
 */
class LogDirectoryFuzzTest
{
    private static final int SEEDS = Integer.getInteger("lockstep.logfuzz.seeds", 300);
    private static final long FIRST_SEED = Long.getLong("lockstep.logfuzz.firstSeed", 1);

    @TempDir
    Path dir;

    @Test
    void damagedLogDirectoriesOpenCleanlyOrFailWithAReason() throws Exception
    {
        final Path pristine = dir.resolve("pristine");
        final List<TestFrames.Frame> written = new ArrayList<>();
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(pristine)))
        {
            for (int i = 0; i < 600; i++)
            {
                final byte[] payload = TestFrames.payload(7, i, TestFrames.lengthFor(7, i, 900));
                final long end = TestFrames.append(log, 1 + i / 200, 1, payload);
                written.add(new TestFrames.Frame(end - FrameDescriptor.alignedFrameLength(payload.length),
                    1 + i / 200, 1, payload));
            }
            log.flush();
        }
        int opened = 0;
        int refused = 0;
        for (long seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++)
        {
            final Path copy = dir.resolve("copy-" + seed);
            copy(pristine, copy);
            final String what = damage(copy, new Random(seed));
            final String context = "log directory fuzz seed " + seed + " (" + what + ")";
            try
            {
                if (openAndCheck(copy, written, context))
                {
                    opened++;
                }
                else
                {
                    refused++;
                }
            }
            catch (final AssertionError ex)
            {
                throw ex;
            }
            catch (final Throwable t)
            {
                throw new AssertionError(context + ": " + t, t);
            }
            IoUtil.delete(copy.toFile(), true);
        }
        System.out.printf("log directory fuzz: %d seeds, %d opened serving only what was written, %d refused with " +
            "a reason%n", SEEDS, opened, refused);
        assertEquals(SEEDS, opened + refused);
    }

    private static boolean openAndCheck(final Path copy, final List<TestFrames.Frame> written, final String context)
        throws IOException
    {
        final ArchiveLog log;
        try
        {
            log = ArchiveLog.open(TestFrames.config(copy));
        }
        catch (final ArchiveException ex)
        {
            assertNotNull(ex.getMessage(), context);
            return false;
        }
        try (log)
        {
            final List<TestFrames.Frame> read = new ArrayList<>();
            try (LogReader reader = log.newReader(log.startPosition()))
            {
                while (reader.poll((buffer, offset, length, position, term, type) -> read.add(
                    new TestFrames.Frame(position, term, type, TestFrames.bytes(buffer, offset, length))),
                    Long.MAX_VALUE, 100) > 0)
                {
                }
            }
            catch (final ArchiveException ex)
            {
                assertNotNull(ex.getMessage(), context);
            }
            int w = 0;
            for (final TestFrames.Frame frame : read)
            {
                while (w < written.size() && written.get(w).position() < frame.position())
                {
                    w++;
                }
                assertEquals(written.get(w).position(), frame.position(), context);
                assertArrayEquals(written.get(w).payload(), frame.payload(), context);
            }
            return true;
        }
    }

    private static String damage(final Path copy, final Random random) throws IOException
    {
        final StringBuilder what = new StringBuilder();
        final int count = 1 + random.nextInt(3);
        for (int n = 0; n < count; n++)
        {
            final List<Path> files;
            try (Stream<Path> list = Files.list(copy))
            {
                files = list.filter(Files::isRegularFile).sorted().toList();
            }
            if (files.isEmpty())
            {
                break;
            }
            final Path file = files.get(random.nextInt(files.size()));
            final long size = Files.size(file);
            switch (random.nextInt(5))
            {
                case 0 ->
                {
                    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
                    {
                        final int bytes = 1 + random.nextInt(16);
                        final long at = size == 0 ? 0 : Math.floorMod(random.nextLong(), size);
                        final byte[] garbage = new byte[bytes];
                        random.nextBytes(garbage);
                        raf.seek(at);
                        raf.write(garbage);
                    }
                    what.append("overwrote bytes of ").append(file.getFileName()).append("; ");
                }
                case 1 ->
                {
                    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
                    {
                        raf.setLength(size == 0 ? 0 : Math.floorMod(random.nextLong(), size));
                    }
                    what.append("cut ").append(file.getFileName()).append(" short; ");
                }
                case 2 ->
                {
                    Files.delete(file);
                    what.append("deleted ").append(file.getFileName()).append("; ");
                }
                case 3 ->
                {
                    final byte[] garbage = new byte[1 + random.nextInt(4096)];
                    random.nextBytes(garbage);
                    Files.write(file, garbage, StandardOpenOption.APPEND);
                    what.append("appended garbage to ").append(file.getFileName()).append("; ");
                }
                default ->
                {
                    final byte[] garbage = new byte[random.nextInt(512)];
                    random.nextBytes(garbage);
                    final String name = random.nextBoolean() ? "stranger.bin" :
                        SegmentFiles.name((1L + random.nextInt(8)) * TestFrames.config(copy).segmentLength());
                    if (!Files.exists(copy.resolve(name)))
                    {
                        Files.write(copy.resolve(name), garbage);
                        what.append("added ").append(name).append("; ");
                    }
                }
            }
        }
        return what.toString();
    }

    private static void copy(final Path from, final Path to) throws IOException
    {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from))
        {
            for (final Path p : files.toList())
            {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }
}
