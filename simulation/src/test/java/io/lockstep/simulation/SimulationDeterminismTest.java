package io.lockstep.simulation;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A seed replays the same run exactly: that is what makes a failing seed worth printing.
 */
class SimulationDeterminismTest
{
    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.OFF);
    }

    @Test
    void theSameSeedReplaysTheSameRunAndAnotherSeedDoesNot()
    {
        assertEquals(fingerprint(42), fingerprint(42));
        assertNotEquals(fingerprint(42), fingerprint(43));
    }

    private static String fingerprint(final long seed)
    {
        final Simulation simulation = new Simulation(seed, 5);
        simulation.run(3000);
        return simulation.steps() + "/" + simulation.crashes() + "/" + simulation.partitions + "/" +
            simulation.elections() + "/" + simulation.acked() + "/" + simulation.historyEnd();
    }
}
