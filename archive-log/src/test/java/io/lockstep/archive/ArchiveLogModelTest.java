package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.lockstep.archive.FrameDescriptor.alignedFrameLength;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random sequences of append, flush, read, truncate, purge and reopen against a list of frames in memory. A failure
 * names the seed; run one seed again with {@code -Dlockstep.model.seed=N}, more with {@code -Dlockstep.model.runs=N}.
 */
class ArchiveLogModelTest
{
    @TempDir
    Path dir;

    @Test
    void randomOperationsAgreeWithAnInMemoryModel()
    {
        final String fixedSeed = System.getProperty("lockstep.model.seed");
        final int runs = Integer.getInteger("lockstep.model.runs", 40);
        final long firstSeed = null != fixedSeed ? Long.parseLong(fixedSeed) : System.nanoTime();
        for (int run = 0; run < (null != fixedSeed ? 1 : runs); run++)
        {
            final long seed = firstSeed + run;
            try
            {
                runOne(seed, dir.resolve("run-" + run));
            }
            catch (final Throwable t)
            {
                throw new AssertionError("model test failed for seed " + seed +
                    "; replay: mvn -pl archive-log test -Dtest=ArchiveLogModelTest -Dlockstep.model.seed=" + seed, t);
            }
        }
    }

    private static void runOne(final long seed, final Path runDir)
    {
        final Random random = new Random(seed);
        final ArchiveLogConfig config = TestFrames.config(runDir)
            .durability(random.nextBoolean() ? DurabilityPolicy.NONE : DurabilityPolicy.BATCH);
        final List<TestFrames.Frame> model = new ArrayList<>();
        long payloadIndex = 0;
        long term = 1;
        long modelEnd = 0;
        ArchiveLog log = ArchiveLog.open(config);
        try
        {
            for (int step = 0; step < 300; step++)
            {
                final int op = random.nextInt(100);
                if (op < 50)
                {
                    final int count = 1 + random.nextInt(20);
                    for (int i = 0; i < count; i++)
                    {
                        term += random.nextInt(20) == 0 ? 1 : 0;
                        final int length = random.nextInt(4) == 0 ? random.nextInt(log.maxPayloadLength() + 1) :
                            random.nextInt(400);
                        final byte[] payload = TestFrames.payload(seed, payloadIndex++, length);
                        final int type = random.nextInt(1000);
                        final long end = TestFrames.append(log, term, type, payload);
                        model.add(new TestFrames.Frame(end - alignedFrameLength(length), term, type, payload));
                        modelEnd = end;
                    }
                }
                else if (op < 65)
                {
                    log.flush();
                    assertEquals(log.pendingPosition(), log.appendedPosition());
                }
                else if (op < 80)
                {
                    log.flush();
                    if (!model.isEmpty())
                    {
                        final int from = random.nextInt(model.size());
                        checkRead(log, model, from);
                    }
                }
                else if (op < 88)
                {
                    log.flush();
                    if (!model.isEmpty())
                    {
                        final int keep = random.nextInt(model.size() + 1);
                        final long cut = keep == model.size() ? log.appendedPosition() : model.get(keep).position();
                        log.truncate(cut);
                        model.subList(keep, model.size()).clear();
                        assertEquals(cut, log.appendedPosition());
                        modelEnd = cut;
                    }
                }
                else if (op < 93)
                {
                    log.flush();
                    final long request = (long)(random.nextDouble() * (log.appendedPosition() + 1));
                    final long before = log.startPosition();
                    final long start = log.purge(request);
                    assertTrue(start >= before && start <= Math.max(before, request), "purge kept what was asked for");
                    model.removeIf(f -> f.position() < start);
                }
                else
                {
                    log.close();
                    log = ArchiveLog.open(config);
                    assertEquals(modelEnd, log.appendedPosition());
                }
            }
            log.flush();
            if (!model.isEmpty())
            {
                checkRead(log, model, 0);
            }
            assertEquals(model.size(), countVerified(runDir), "verify sees every frame");
        }
        finally
        {
            log.close();
        }
    }

    private static long countVerified(final Path dir)
    {
        return ArchiveLog.verify(dir, null).framesScanned();
    }

    private static void checkRead(final ArchiveLog log, final List<TestFrames.Frame> model, final int from)
    {
        final List<TestFrames.Frame> read = TestFrames.readAll(log, model.get(from).position());
        assertEquals(model.size() - from, read.size(), "frames read from index " + from);
        for (int i = 0; i < read.size(); i++)
        {
            final TestFrames.Frame expected = model.get(from + i);
            final TestFrames.Frame actual = read.get(i);
            assertEquals(expected.position(), actual.position(), "position of frame " + (from + i));
            assertEquals(expected.term(), actual.term(), "term of frame " + (from + i));
            assertEquals(expected.type(), actual.type(), "type of frame " + (from + i));
            assertArrayEquals(expected.payload(), actual.payload(), "payload of frame " + (from + i));
        }
    }
}
