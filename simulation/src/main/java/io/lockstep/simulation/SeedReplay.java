package io.lockstep.simulation;

/**
 * A failing seed is run once more, at once, in the same JVM, and the failure message says what that showed: the
 * same failure (a bug the seed replays) or none (the run was not deterministic: something outside the seed, such as
 * state left by an earlier seed or a test class run before, leaked in, and that is itself the bug to find).
 */
public final class SeedReplay
{
    private SeedReplay()
    {
    }

    /**
     * A run of one seed.
     */
    @FunctionalInterface
    public interface Run
    {
        void run() throws Exception;
    }

    /**
     * @return what replaying the seed showed, for the failure message.
     */
    public static String again(final Run run)
    {
        try
        {
            run.run();
            return "REPLAYED IN THIS JVM WITHOUT FAILING: the run was not deterministic";
        }
        catch (final Throwable again)
        {
            return "replayed in this JVM, it fails again: " + again;
        }
    }
}
