package io.lockstep.consensus.node;

import org.agrona.concurrent.EpochNanoClock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A member's wall clock, for the one thread that stamps log time: the monotonic clock added to the system clock as
 * sampled at most {@link #RESAMPLE_NS} ago. Agrona's {@code SystemEpochNanoClock} reads {@code Instant.now()}, an
 * object per read unless the JIT removes it, which it did in one build of the duty cycle and not in another
 * (measured: 880 bytes per message on a DEDICATED leader, from its idle duty cycles). Agrona's
 * {@code OffsetEpochNanoClock} does the same sum but allocates a holder at every resample; this allocates nothing.
 * <p>
 * A step of the system clock is followed within {@link #RESAMPLE_NS}. The system clock has millisecond resolution
 * here, so each sample is taken as the middle of its millisecond: within half a millisecond either way (log time
 * never goes back for it, see {@code LogClock}). Not thread-safe.
 * <p>
 * For tests only, a file can step this clock ({@code lockstep.test.clock.offset.file}): while it exists, the
 * milliseconds written in it are added to the system clock, read at each resample. It steps one member's clock
 * without touching the machine's.
 */
final class SampledWallClock implements EpochNanoClock
{
    static final long RESAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The largest step a test may inject: a day either way. */
    private static final long MAX_TEST_OFFSET_MS = TimeUnit.DAYS.toMillis(1);

    private final Path offsetFile;
    private long sampledEpochNs;
    private long sampledAtNs;
    private boolean sampled;

    /** @param offsetFile for tests only, or null: see above. */
    SampledWallClock(final Path offsetFile)
    {
        this.offsetFile = offsetFile;
    }

    public long nanoTime()
    {
        final long now = System.nanoTime();
        if (!sampled || now - sampledAtNs >= RESAMPLE_NS)
        {
            sampledEpochNs = (System.currentTimeMillis() + testOffsetMs()) * 1_000_000L + 500_000L;
            sampledAtNs = now;
            sampled = true;
        }
        return sampledEpochNs + (now - sampledAtNs);
    }

    private long testOffsetMs()
    {
        // A regular file of a few bytes only: a pipe or a device planted there must not hang the member's thread.
        if (null == offsetFile || !Files.isRegularFile(offsetFile, LinkOption.NOFOLLOW_LINKS))
        {
            return 0;
        }
        try
        {
            if (Files.size(offsetFile) > 32)
            {
                return 0;
            }
            final long offsetMs = Long.parseLong(Files.readString(offsetFile).trim());
            return Math.min(Math.max(offsetMs, -MAX_TEST_OFFSET_MS), MAX_TEST_OFFSET_MS);
        }
        catch (final IOException | NumberFormatException ex)
        {
            return 0; // removed or half written as it was read
        }
    }
}
