package io.lockstep.consensus.sim;

/**
 * Progress of a long run of seeds: a line every {@link #EVERY} seeds with the rate so far, so an overnight run
 * shows it is alive and how fast it goes; and the rate at the end.
 */
final class SeedProgress
{
    static final int EVERY = 10_000;

    private final String name;
    private final long startNs = System.nanoTime();
    private long done;

    SeedProgress(final String name)
    {
        this.name = name;
    }

    void seedDone(final long seed)
    {
        if (++done % EVERY == 0)
        {
            System.out.printf("%s: %d seeds passed (up to seed %d), %.0f seeds/s%n", name, done, seed, perSecond());
        }
    }

    double seconds()
    {
        return (System.nanoTime() - startNs) / 1e9;
    }

    double perSecond()
    {
        return done / Math.max(1e-9, seconds());
    }
}
