package io.lockstep.simulation;

/**
 * Progress of a long run of seeds: a line every {@link #EVERY} seeds with the rate so far, so an overnight run
 * shows it is alive and how fast it goes; and the rate at the end.
 */
public final class SeedProgress
{
    static final int EVERY = 10_000;

    private final String name;
    private final long startNs = System.nanoTime();
    private long done;

    public SeedProgress(final String name)
    {
        this.name = name;
    }

    public void seedDone(final long seed)
    {
        if (++done % EVERY == 0)
        {
            System.out.printf("%s: %d seeds passed (up to seed %d), %.0f seeds/s%n", name, done, seed, perSecond());
        }
    }

    public double seconds()
    {
        return (System.nanoTime() - startNs) / 1e9;
    }

    public double perSecond()
    {
        return done / Math.max(1e-9, seconds());
    }
}
