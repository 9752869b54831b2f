package io.lockstep.archive;

import java.nio.file.Path;

/**
 * The process {@link MappingWarmUpTest} runs with {@code -verbose:class}: opens a log, prints {@code opened}, then
 * writes across {@link #SEGMENTS} segment rollovers with a reader following (each segment it reaches is mapped),
 * and prints {@code done <frames read>}. What the JVM loads between the two lines is what rollovers load.
 */
public final class RolloverProbe
{
    static final int SEGMENTS = 24;
    private static final int SEGMENT_LENGTH = 4096;

    private RolloverProbe()
    {
    }

    public static void main(final String[] args)
    {
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(Path.of(args[0]))
            .segmentLength(SEGMENT_LENGTH).maxBatchLength(SEGMENT_LENGTH / 4).durability(DurabilityPolicy.BATCH);
        try (ArchiveLog log = ArchiveLog.open(config); LogReader reader = log.newReader(log.startPosition()))
        {
            System.out.println("opened");
            System.out.flush();
            final byte[] payload = new byte[200];
            long read = 0;
            while (log.appendedPosition() < (long)SEGMENTS * SEGMENT_LENGTH)
            {
                TestFrames.append(log, 1, 1, payload);
                log.flush();
                read += reader.poll((buffer, offset, length, position, term, type) -> { }, Long.MAX_VALUE, 100);
            }
            System.out.println("done " + read);
        }
    }
}
