package io.lockstep.consensus.service;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static io.lockstep.consensus.service.SessionTable.Disposition.APPLY;
import static io.lockstep.consensus.service.SessionTable.Disposition.DUPLICATE;
import static io.lockstep.consensus.service.SessionTable.Disposition.OUT_OF_ORDER;
import static io.lockstep.consensus.service.SessionTable.Disposition.UNKNOWN_SESSION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SessionTableTest
{
    private static final SessionSecret SECRET = new SessionSecret(1, 2, true);

    @Test
    void sessionsOpenPerPrincipalAreCountedAsTheyOpenCloseAndRestore()
    {
        final SessionTable table = new SessionTable(10, 1024);
        final long alice = table.open("alice", SECRET).id();
        table.open("alice", SECRET);
        table.open("bob", SECRET);
        assertEquals(2, table.openFor("alice"));
        assertEquals(1, table.openFor("bob"));
        assertEquals(0, table.openFor("carol"));
        table.close(alice);
        assertEquals(1, table.openFor("alice"));
        final SessionTable restored = new SessionTable(10, 1024);
        restored.restoreNextSessionId(5);
        restored.restore(3, -1, "bob", SECRET);
        assertEquals(1, restored.openFor("bob"));
    }

    @Test
    void aSessionSecretMatchesOnlyItsOwnBitsAndASessionWithoutOneMatchesNothing()
    {
        final SessionSecret secret = SessionSecret.next(new Random(3));
        assertTrue(secret.matches(secret.high(), secret.low()));
        assertFalse(secret.matches(secret.high(), secret.low() ^ 1));
        assertFalse(secret.matches(secret.high() ^ Long.MIN_VALUE, secret.low()));
        assertFalse(SessionSecret.NONE.matches(0, 0), "a session from before secrets cannot be resumed");
        assertFalse(secret.toString().contains(Long.toString(secret.high())), "never printed");
    }

    @Test
    void eachSequenceIsAppliedOnceAndRetriesAreDuplicates()
    {
        final SessionTable table = new SessionTable(10, 1024);
        final long id = table.open("", SECRET).id();
        assertEquals(APPLY, table.onMessage(id, 0));
        assertEquals(APPLY, table.onMessage(id, 1));
        assertEquals(DUPLICATE, table.onMessage(id, 1), "a retry after failover");
        assertEquals(DUPLICATE, table.onMessage(id, 0));
        assertEquals(OUT_OF_ORDER, table.onMessage(id, 3), "2 was lost before the log; the client resends it");
        assertEquals(APPLY, table.onMessage(id, 2));
        assertEquals(APPLY, table.onMessage(id, 3));
        assertEquals(3, table.get(id).appliedSequence());
        assertEquals(UNKNOWN_SESSION, table.onMessage(id + 1, 0));
    }

    @Test
    void idsAreAssignedInLogOrderEvenWhenAnOpenIsRefused()
    {
        final SessionTable table = new SessionTable(1, 1024);
        assertEquals(1, table.open("", SECRET).id());
        assertNull(table.open("", SECRET), "full");
        table.close(1);
        assertEquals(3, table.open("", SECRET).id(), "id 2 was used up by the refused open, on every member alike");
        assertEquals(UNKNOWN_SESSION, table.onMessage(1, 0), "closed");
    }

    @Test
    void membersApplyingTheSameEntriesHoldTheSameTable()
    {
        assertEquals(play(5), play(5));
        assertNotEquals(play(5), play(6));
    }

    private static long play(final long seed)
    {
        final Random random = new Random(seed);
        final SessionTable table = new SessionTable(50, 512);
        for (int i = 0; i < 10_000; i++)
        {
            final int op = random.nextInt(20);
            if (op == 0)
            {
                table.open("", SECRET);
            }
            else if (op == 1)
            {
                table.close(1 + random.nextInt(60));
            }
            else
            {
                final long id = 1 + random.nextInt(60);
                final SessionTable.Session s = table.get(id);
                final long sequence = null == s ? 0 : s.appliedSequence() + random.nextInt(3) - 1;
                if (APPLY == table.onMessage(id, sequence))
                {
                    table.get(id).egress().append(new UnsafeBuffer(new byte[16]), 0, 16);
                }
            }
        }
        return table.stateHash();
    }
}
