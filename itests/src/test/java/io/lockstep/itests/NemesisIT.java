package io.lockstep.itests;

import io.lockstep.examples.kv.Nemesis;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The nemesis command's run, shortened: two minutes of kills, pauses, partitions, full and slow disks and clock steps
 * at random under the key-value clients (as root, as CI runs; see {@link Nemesis}), and the history must be
 * linearizable with nothing applied twice. {@code -Dlockstep.nemesis.minutes=10} for the full run;
 * {@code bin/lockstep nemesis} prints the same figures.
 */
class NemesisIT
{
    @Test
    void theHistoryThroughRandomFaultsIsLinearizableAndNothingIsAppliedTwice() throws Exception
    {
        final double minutes = Double.parseDouble(System.getProperty("lockstep.nemesis.minutes", "2"));
        assertEquals(0, Nemesis.run(minutes, Long.getLong("lockstep.nemesis.seed", 1)),
            "the nemesis run found a history that is not linearizable, or an operation applied twice (output above)");
    }
}
