package io.lockstep.simulation;

import org.agrona.concurrent.EpochNanoClock;

import java.util.Random;
import java.util.function.LongSupplier;

/**
 * One member's wall clock in the simulation: its own origin (hosts disagree by up to a second), its own drift (up to
 * 300 ppm either way, a cheap crystal) and steps (an NTP correction, forward or back, up to half a second). Log time
 * must stay monotonic and timers must fire at or after their deadlines whatever these do.
 */
final class SimWallClock implements EpochNanoClock
{
    /** 2026-11-23, so that log times look like real epoch times in failures. */
    private static final long EPOCH_BASE_NS = 1_795_000_000_000_000_000L;
    private static final long MAX_SKEW_NS = 1_000_000_000L;
    private static final long MAX_STEP_NS = 500_000_000L;

    private final LongSupplier monotonicNs;
    private final long originNs;
    private final double drift;
    private long stepsNs;

    SimWallClock(final LongSupplier monotonicNs, final Random random)
    {
        this.monotonicNs = monotonicNs;
        this.originNs = EPOCH_BASE_NS + (long)((random.nextDouble() * 2 - 1) * MAX_SKEW_NS);
        this.drift = (random.nextDouble() * 2 - 1) * 300e-6;
    }

    public long nanoTime()
    {
        final long now = monotonicNs.getAsLong();
        return originNs + now + (long)(now * drift) + stepsNs;
    }

    /**
     * Step the clock, as an NTP correction would: forward or back.
     */
    void step(final Random random)
    {
        stepsNs += (long)((random.nextDouble() * 2 - 1) * MAX_STEP_NS);
    }
}
