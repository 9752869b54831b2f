package io.lockstep.simulation;

/**
 * The faults one simulated run injected, by class, so that a simulation can assert that each fault it claims to
 * test actually happened (a run whose faults silently stopped firing would otherwise pass). Counting draws nothing
 * from the run's random source: a seed injects the same faults with or without it.
 */
public final class FaultCounts
{
    long crashes;
    long restarts;
    long diskDamage;
    long rottenSnapshots;
    long partitions;
    long clockSteps;
    long brokenLinks;
    long heals;
    long fullDisks;
    long slowDisks;
    long damagedFrames;

    /** @return members stopped as by a power cut (unsynced writes lost, the last one possibly torn). */
    public long crashes()
    {
        return crashes;
    }

    /** @return crashed members started again. */
    public long restarts()
    {
        return restarts;
    }

    /** @return crashes that also damaged durable frames (a bit flip, a lost or misdirected write). */
    public long diskDamage()
    {
        return diskDamage;
    }

    /** @return newest snapshots damaged while their member was down. */
    public long rottenSnapshots()
    {
        return rottenSnapshots;
    }

    /** @return members put in a network partition of their own. */
    public long partitions()
    {
        return partitions;
    }

    /** @return steps of a member's wall clock (forwards or back). */
    public long clockSteps()
    {
        return clockSteps;
    }

    /** @return links made one-way, cut between one pair, or set flapping. */
    public long brokenLinks()
    {
        return brokenLinks;
    }

    /** @return times a member's disk filled up (and emptied again later). */
    public long fullDisks()
    {
        return fullDisks;
    }

    /** @return times a member's log turned slow to sync (and healthy again later). */
    public long slowDisks()
    {
        return slowDisks;
    }

    /** @return durable frames damaged while their member ran (found by a reader, repaired from the others). */
    public long damagedFrames()
    {
        return damagedFrames;
    }

    /** @return times the whole network was healed. */
    public long heals()
    {
        return heals;
    }

    /**
     * Add another run's counts to these.
     *
     * @param other the run's counts.
     */
    public void add(final FaultCounts other)
    {
        crashes += other.crashes;
        restarts += other.restarts;
        diskDamage += other.diskDamage;
        rottenSnapshots += other.rottenSnapshots;
        partitions += other.partitions;
        clockSteps += other.clockSteps;
        brokenLinks += other.brokenLinks;
        heals += other.heals;
        fullDisks += other.fullDisks;
        slowDisks += other.slowDisks;
        damagedFrames += other.damagedFrames;
    }

    public String toString()
    {
        return crashes + " crashes (" + diskDamage + " with disk damage, " + rottenSnapshots + " rotten snapshots), " +
            restarts + " restarts, " + partitions + " partitions, " + brokenLinks + " one-way, cut or flapping " +
            "links, " + clockSteps + " clock steps, " + fullDisks + " full disks, " + slowDisks + " slow disks, " +
            damagedFrames + " frames damaged while running, " + heals + " heals";
    }
}
