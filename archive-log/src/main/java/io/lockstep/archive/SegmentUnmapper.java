package io.lockstep.archive;

import java.util.concurrent.ExecutorService;

/**
 * Unmaps the segments readers have moved past, on one daemon thread of its own, so that a reader crossing into the
 * next segment does not pay for tearing down the last one's mapping. Measured at 10k msg/s on this project's
 * 2-core machine: the first reader to unmap at each rollover took 3.7-8.4 ms on every member (the others 0.1 ms);
 * done here, the member's duty cycle only hands the mapping over. The thread runs at the
 * {@link BackgroundPriority background priority}.
 * <p>
 * A reader hands a segment over only once it holds no view of it any more, so nothing can read a mapping after it
 * has been unmapped; the thread only ever delays an unmap, never brings one forward. It is started with this class,
 * when the first reader is made, not on the first rollover.
 */
final class SegmentUnmapper
{
    private static final System.Logger LOGGER = System.getLogger(SegmentUnmapper.class.getName());
    private static final ExecutorService THREAD = BackgroundPriority.singleThreadExecutor("lockstep-unmap");

    private SegmentUnmapper()
    {
    }

    /** Make sure the thread is running (loads this class). */
    static void start()
    {
    }

    /**
     * Unmap a segment soon, on the unmap thread; the caller must hold no view of it.
     */
    static void unmapLater(final MappedSegment segment)
    {
        THREAD.execute(segment);
    }

    static void report(final MappedSegment segment, final RuntimeException ex)
    {
        LOGGER.log(System.Logger.Level.WARNING, "unmapping " + segment.file() + " failed: " + ex);
    }
}
