package io.lockstep.archive;

import java.nio.file.Path;

/**
 * The process {@link RolloverWarmUpTest} runs with {@code -verbose:class}: opens a log, prints {@code opened}, then
 * writes across {@link #SEGMENTS} segment rollovers with a reader following (each segment it reaches is mapped),
 * and prints {@code done <frames read>}. What the JVM loads between the two lines is what rollovers load. Under
 * {@code NONE}, so that each rollover hands its segment to the background sync as a member's log does. With a second
 * argument {@code rehearse}, runs {@link RolloverRehearsal} first.
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
        if (args.length > 1 && args[1].equals("rehearse") && !RolloverRehearsal.run())
        {
            throw new IllegalStateException("rehearsal failed");
        }
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(Path.of(args[0]))
            .segmentLength(SEGMENT_LENGTH).maxBatchLength(SEGMENT_LENGTH / 4).durability(DurabilityPolicy.NONE);
        try (ArchiveLog log = ArchiveLog.open(config); LogReader reader = log.newReader(log.startPosition()))
        {
            // The log's own threads load what they need as they start (the unmap thread's first wait loads the
            // fork-join pool, for one): let them reach their first wait, as a member's have long before it rolls.
            awaitWaiting("lockstep-unmap");
            awaitWaiting("log-background-sync-");
            final FrameHandler ignore = (buffer, offset, length, position, term, type) -> { }; // linked here, not later
            TestFrames.append(log, 1, 1, new byte[1]); // loads the probe's own helper; well within the first segment
            System.out.println("opened");
            System.out.flush();
            final byte[] payload = new byte[200];
            long read = 0;
            while (log.appendedPosition() < (long)SEGMENTS * SEGMENT_LENGTH)
            {
                TestFrames.append(log, 1, 1, payload);
                log.flush();
                read += reader.poll(ignore, Long.MAX_VALUE, 100);
            }
            System.out.println("done " + read);
        }
    }

    private static void awaitWaiting(final String threadNamePrefix)
    {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith(threadNamePrefix) &&
            (t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING)))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("no waiting thread named " + threadNamePrefix + "* within 10 s");
            }
            Thread.onSpinWait();
        }
    }
}
