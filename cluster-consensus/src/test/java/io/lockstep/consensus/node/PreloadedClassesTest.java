package io.lockstep.consensus.node;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PreloadedClassesTest
{
    @Test
    void everyNamedClassExistsSoThatARenameCannotSilentlyDropOne()
    {
        assertEquals(PreloadedClasses.NAMES.length, PreloadedClasses.load());
    }
}
