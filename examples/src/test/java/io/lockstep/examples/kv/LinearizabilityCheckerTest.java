package io.lockstep.examples.kv;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LinearizabilityCheckerTest
{
    private static HistoryOperation put(final int c, final String k, final String v, final long call, final long ret,
        final String status)
    {
        return new HistoryOperation(c, "put", k, null, v, call, ret, status, null);
    }

    private static HistoryOperation get(final int c, final String k, final String out, final long call, final long ret)
    {
        return new HistoryOperation(c, "get", k, null, null, call, ret, "ok", out);
    }

    private static HistoryOperation cas(final int c, final String k, final String exp, final String v, final long call,
        final long ret, final String status, final String out)
    {
        return new HistoryOperation(c, "cas", k, exp, v, call, ret, status, out);
    }

    @Test
    void sequentialReadsOfWritesAreLinearizable()
    {
        assertTrue(LinearizabilityChecker.check(List.of(
            get(1, "k", "", 0, 1),
            put(1, "k", "a", 2, 3, "ok"),
            get(2, "k", "a", 4, 5),
            cas(1, "k", "a", "b", 6, 7, "ok", "true"),
            cas(2, "k", "a", "c", 8, 9, "ok", "false"),
            get(1, "k", "b", 10, 11))).linearizable());
    }

    @Test
    void aStaleReadAfterAWriteCompletedIsNot()
    {
        final LinearizabilityChecker.Result result = LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 1, "ok"),
            put(1, "k", "b", 2, 3, "ok"),
            get(2, "k", "a", 4, 5)));
        assertFalse(result.linearizable());
        assertEquals("k", result.badKey());
    }

    @Test
    void concurrentOperationsMayTakeEffectInEitherOrder()
    {
        assertTrue(LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 10, "ok"),
            get(2, "k", "", 1, 2),
            get(3, "k", "a", 3, 4),
            get(2, "k", "a", 11, 12))).linearizable());
        assertFalse(LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 10, "ok"),
            get(3, "k", "a", 3, 4),
            get(2, "k", "", 5, 6))).linearizable(), "once a is seen, '' cannot come back");
    }

    @Test
    void failedOperationsDidNotHappenAndInfoOnesMayHaveAtAnyTimeAfterTheirCall()
    {
        assertFalse(LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 1, "fail"),
            get(2, "k", "a", 2, 3))).linearizable(), "a failed put is never seen");
        assertTrue(LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 1, "info"),
            get(2, "k", "", 2, 3),
            get(2, "k", "a", 100, 101))).linearizable(), "an unknown put may take effect late");
        assertTrue(LinearizabilityChecker.check(List.of(
            put(1, "k", "a", 0, 1, "info"),
            get(2, "k", "", 2, 3))).linearizable(), "or never");
        assertFalse(LinearizabilityChecker.check(List.of(
            get(2, "k", "a", 0, 1),
            put(1, "k", "a", 5, 6, "info"))).linearizable(), "but never before its call");
    }

    @Test
    void keysAreIndependent()
    {
        assertTrue(LinearizabilityChecker.check(List.of(
            put(1, "x", "1", 0, 1, "ok"),
            put(1, "y", "2", 2, 3, "ok"),
            get(2, "x", "1", 4, 5),
            get(2, "y", "2", 4, 5))).linearizable());
    }

    @Test
    void historiesOfARealRegisterUnderConcurrencyAlwaysPass()
    {
        // Simulated clients against one atomic register: each operation takes effect at a random instant inside
        // its interval, so the history is linearizable by construction.
        for (long seed = 0; seed < 50; seed++)
        {
            final List<HistoryOperation> history = simulate(seed, false);
            final LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
            assertTrue(result.linearizable(), "seed " + seed + ": " + result.detail());
        }
    }

    @Test
    void aCorruptedHistoryIsCaught()
    {
        int caught = 0;
        for (long seed = 0; seed < 50; seed++)
        {
            caught += LinearizabilityChecker.check(simulate(seed, true)).linearizable() ? 0 : 1;
        }
        assertTrue(caught >= 40, "most histories with a lying read are caught: " + caught + " of 50");
    }

    @Test
    void jsonLinesRoundTripAndBadLinesAreNamed()
    {
        final HistoryOperation op = cas(3, "k1", "v7", "v8", 12, 34, "ok", "true");
        assertEquals("{\"client\":3,\"op\":\"cas\",\"key\":\"k1\",\"expected\":\"v7\",\"value\":\"v8\"," +
            "\"call\":12,\"return\":34,\"status\":\"ok\",\"output\":\"true\"}", op.toJson());
        assertEquals(op, HistoryOperation.parse(op.toJson()));
        assertEquals(get(1, "k", "", 1, 2), HistoryOperation.parse(get(1, "k", "", 1, 2).toJson()));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> HistoryOperation.parse("{\"client\":1,\"op\":\"get\"}"));
        assertTrue(ex.getMessage().contains("missing \"key\""), ex.getMessage());
    }

    private static List<HistoryOperation> simulate(final long seed, final boolean lie)
    {
        final Random random = new Random(seed);
        final List<HistoryOperation> history = new ArrayList<>();
        final Map<String, String> register = new HashMap<>();
        // Generate intervals, then apply effects in the order of their random effect instants.
        final List<Object[]> pending = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < 60; i++)
        {
            t += random.nextInt(5);
            final long call = t;
            final long ret = call + 1 + random.nextInt(20);
            final long effect = call + random.nextInt((int)(ret - call));
            pending.add(new Object[]{ effect, i, call, ret, random.nextInt(3), "k" + random.nextInt(2),
                "v" + random.nextInt(4), "v" + random.nextInt(4) });
        }
        pending.sort((a, b) -> Long.compare((long)a[0], (long)b[0]));
        boolean lied = false;
        for (final Object[] p : pending)
        {
            final int kind = (int)p[4];
            final String key = (String)p[5];
            final String current = register.getOrDefault(key, "");
            final long call = (long)p[2];
            final long ret = (long)p[3];
            if (0 == kind)
            {
                String out = current;
                if (lie && !lied && random.nextInt(4) == 0)
                {
                    out = current + "-stale";
                    lied = true;
                }
                history.add(get(1 + (int)p[1] % 5, key, out, call, ret));
            }
            else if (1 == kind)
            {
                register.put(key, (String)p[6]);
                history.add(put(1 + (int)p[1] % 5, key, (String)p[6], call, ret, "ok"));
            }
            else
            {
                final boolean swap = current.equals(p[7]);
                if (swap)
                {
                    register.put(key, (String)p[6]);
                }
                history.add(cas(1 + (int)p[1] % 5, key, (String)p[7], (String)p[6], call, ret, "ok",
                    Boolean.toString(swap)));
            }
        }
        if (lie && !lied)
        {
            history.add(get(9, "k0", "never-written", t + 100, t + 101));
        }
        return history;
    }
}
