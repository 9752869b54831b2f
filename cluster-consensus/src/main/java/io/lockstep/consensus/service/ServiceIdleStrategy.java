package io.lockstep.consensus.service;

import org.agrona.concurrent.IdleStrategy;

/**
 * How a DEDICATED member's service thread waits for newly committed entries: after some spins and yields it parks
 * until the consensus thread publishes a higher commit position (which unparks it) or 1 ms passes. With no spins
 * and yields allowed it parks at once; {@code spin} never parks (one core kept busy).
 */
public final class ServiceIdleStrategy implements IdleStrategy
{
    private final ServiceHandoff handoff;
    private final int maxSpins;
    private final int maxYields;
    private int spins;
    private int yields;

    /**
     * @param handoff   shared with the consensus thread, which unparks this one.
     * @param maxSpins  spins before yielding; {@code Integer.MAX_VALUE} to spin for ever.
     * @param maxYields yields before parking.
     */
    public ServiceIdleStrategy(final ServiceHandoff handoff, final int maxSpins, final int maxYields)
    {
        this.handoff = handoff;
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    public void idle()
    {
        if (spins < maxSpins)
        {
            spins++;
            Thread.onSpinWait();
        }
        else if (yields < maxYields)
        {
            yields++;
            Thread.yield();
        }
        else
        {
            handoff.parkService();
        }
    }

    public void reset()
    {
        spins = 0;
        yields = 0;
    }

    public String alias()
    {
        return "service-park";
    }
}
