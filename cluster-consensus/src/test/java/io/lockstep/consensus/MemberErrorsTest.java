package io.lockstep.consensus;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemberErrorsTest
{
    private long nowNs = 1;
    private final MemberErrors errors = new MemberErrors(() -> nowNs++, new MemberMetrics());

    @Test
    void messagesThatDifferOnlyInTheirNumbersAreOneErrorShowingTheLatest()
    {
        for (int length = 1; length <= 100; length++)
        {
            errors.record("connection", "bad message length " + (length * 7919));
        }
        final List<MemberErrors.Entry> recent = errors.recent();
        assertEquals(1, recent.size(), recent.toString());
        assertEquals(100, recent.get(0).count());
        assertEquals("bad message length 791900", recent.get(0).message());
    }

    @Test
    void aFloodOfOneKindEvictsOnlyThatKindSoRareEvidenceStays()
    {
        errors.record("forged-sender", "dropped a vote from member 1 that names member 2 as its sender");
        for (int i = 0; i < 1000; i++)
        {
            // Distinct shapes, as varied garbage makes them.
            errors.record("connection", "garbage " + Integer.toString(i, 26).replaceAll("[0-9]", "x") + " from peer");
        }
        final List<MemberErrors.Entry> recent = errors.recent();
        assertEquals(MemberErrors.MAX_DISTINCT, recent.size());
        assertTrue(recent.stream().anyMatch(e -> e.kind().equals("forged-sender")), "the forged sender is kept");
        assertEquals(1001, errors.total());
    }
}
