package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Runs a throwaway log in a temporary directory through {@link #ROLLOVERS} segment rollovers, with a reader of
 * frames and a reader of blocks following, so that what a rollover does for the first time in a JVM happens before a
 * member serves rather than at its first rollover under load.
 * <p>
 * A rollover runs once per segment, so its code stays in the interpreter, and each call site it reaches for the
 * first time is linked there: the JDK's file and channel calls, the hand-over to the background sync and the unmap
 * thread, mapping the next segment: the first rollover held a member's thread several times longer than later ones,
 * on every member at the same log position. Two of those costs are also taken away where they arise, for
 * any user of the log ({@link MappingWarmUp}, and the queue in {@link BackgroundSync}); this takes the rest.
 * <p>
 * Costs about 0.1 s at start (20 ms once the log's classes are loaded) and 20 tiny files, deleted before it returns.
 * It cannot fail a member: any error is reported and ignored, and the first real rollover then pays as it used to.
 * It rehearses under {@link DurabilityPolicy#NONE}: under {@code BATCH} a rollover waits for its own fsyncs, which
 * dwarf the linking.
 */
public final class RolloverRehearsal
{
    private static final System.Logger LOGGER = System.getLogger(RolloverRehearsal.class.getName());
    /** More than JDK 17's inflation threshold for reflective constructors (15): see {@link MappingWarmUp}. */
    static final int ROLLOVERS = 20;
    private static final int SEGMENT_LENGTH = ArchiveLogConfig.MIN_SEGMENT_LENGTH;
    private static final int PAYLOAD_LENGTH = 200;

    private RolloverRehearsal()
    {
    }

    /**
     * Rehearse, in a directory of its own under {@code java.io.tmpdir}, deleted afterwards.
     *
     * @return true if the rehearsal ran through, false if it failed (and was reported as a warning).
     */
    public static boolean run()
    {
        Path dir = null;
        try
        {
            dir = Files.createTempDirectory("lockstep-rollover-rehearsal");
            rehearse(dir);
            return true;
        }
        catch (final IOException | RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "rollover rehearsal failed (the first rollover under load will " +
                "take longer): " + ex);
            return false;
        }
        finally
        {
            if (null != dir)
            {
                deleteQuietly(dir);
            }
        }
    }

    private static void rehearse(final Path dir)
    {
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(dir).segmentLength(SEGMENT_LENGTH)
            .maxBatchLength(SEGMENT_LENGTH / 4).durability(DurabilityPolicy.NONE);
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[PAYLOAD_LENGTH]);
        final long[] seen = new long[2];
        final FrameHandler frames = (buffer, offset, length, position, term, type) -> seen[0]++;
        final BlockHandler blocks = (DirectBuffer buffer, int offset, int length, long start, long end) -> seen[1]++;
        try (ArchiveLog log = ArchiveLog.open(config);
            LogReader frameReader = log.newReader(log.startPosition());
            LogReader blockReader = log.newReader(log.startPosition()))
        {
            final long end = log.startPosition() + (long)ROLLOVERS * SEGMENT_LENGTH;
            while (log.appendedPosition() < end)
            {
                if (ArchiveLog.BACK_PRESSURED == log.append(1, 1, payload, 0, PAYLOAD_LENGTH))
                {
                    log.flush();
                    continue;
                }
                log.flush();
                frameReader.poll(frames, Long.MAX_VALUE, Integer.MAX_VALUE);
                blockReader.readBlock(blocks, Long.MAX_VALUE, SEGMENT_LENGTH);
            }
        }
        if (0 == seen[0] || 0 == seen[1])
        {
            throw new IllegalStateException("the rehearsal's readers read nothing");
        }
    }

    private static void deleteQuietly(final Path dir)
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        catch (final IOException | RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot delete rollover rehearsal directory " + dir + ": " + ex);
        }
    }
}
