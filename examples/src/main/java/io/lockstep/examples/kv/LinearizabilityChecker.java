package io.lockstep.examples.kv;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks a key-value history for linearizability: is there one order of the operations, each taking effect at an
 * instant between its call and its return, in which every read and compare-and-set saw the value the order implies?
 * Each key is checked alone (linearizability composes per object), with the Wing–Gong–Lowe search: try to
 * linearize calls in time order, backtrack when a return is reached whose operation has not taken effect, and
 * remember (operations done, value) pairs already explored. Operations with status {@code fail} did not happen;
 * {@code info} ones may have happened at any time after their call, or never; a get with {@code info} constrains
 * nothing. The initial value of every key is {@code ""}.
 */
public final class LinearizabilityChecker
{
    /** Bound on states explored per key, so a pathological history ends with an answer instead of running on. */
    public static final int MAX_EXPLORED = 5_000_000;

    /**
     * The verdict.
     *
     * @param linearizable true if every key's history is linearizable.
     * @param badKey       the first key that is not, or null.
     * @param detail       what was found.
     */
    public record Result(boolean linearizable, String badKey, String detail)
    {
    }

    private static final class Entry
    {
        final Op op;
        final boolean isCall;
        final long time;
        Entry prev;
        Entry next;
        Entry match;

        Entry(final Op op, final boolean isCall, final long time)
        {
            this.op = op;
            this.isCall = isCall;
            this.time = time;
        }
    }

    private record Op(int id, HistoryOperation h)
    {
    }

    private record Explored(BitSet done, String value)
    {
    }

    private LinearizabilityChecker()
    {
    }

    /**
     * @param history every operation, in any order.
     * @return the verdict.
     */
    public static Result check(final List<HistoryOperation> history)
    {
        final Map<String, List<HistoryOperation>> byKey = new TreeMap<>();
        for (final HistoryOperation op : history)
        {
            final boolean relevant = "ok".equals(op.status()) || ("info".equals(op.status()) && !"get".equals(op.op()));
            if (relevant)
            {
                byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
            }
            else if (!"fail".equals(op.status()) && !"info".equals(op.status()))
            {
                return new Result(false, op.key(), "unknown status '" + op.status() + "' in " + op.toJson());
            }
        }
        for (final Map.Entry<String, List<HistoryOperation>> e : byKey.entrySet())
        {
            final String detail = checkKey(e.getValue());
            if (null != detail)
            {
                return new Result(false, e.getKey(), detail);
            }
        }
        return new Result(true, null, byKey.size() + " keys, " + history.size() + " operations");
    }

    /**
     * @return null if linearizable, else why not.
     */
    private static String checkKey(final List<HistoryOperation> ops)
    {
        final List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++)
        {
            final HistoryOperation h = ops.get(i);
            final Op op = new Op(i, h);
            final Entry call = new Entry(op, true, h.call());
            entries.add(call);
            if ("ok".equals(h.status()))
            {
                final Entry ret = new Entry(op, false, h.ret());
                call.match = ret;
                entries.add(ret);
            }
        }
        // Time order; at equal times calls first, so operations that touch are treated as concurrent (the
        // permissive reading: it never reports a violation that an equal-time tie could explain).
        entries.sort((a, b) -> a.time != b.time ? Long.compare(a.time, b.time) : Boolean.compare(!a.isCall, !b.isCall));
        final Entry head = new Entry(null, false, Long.MIN_VALUE);
        Entry last = head;
        for (final Entry e : entries)
        {
            last.next = e;
            e.prev = last;
            last = e;
        }

        final Set<Explored> explored = new HashSet<>();
        final ArrayList<Entry> stackEntries = new ArrayList<>();
        final ArrayList<String> stackValues = new ArrayList<>();
        final BitSet done = new BitSet(ops.size());
        String value = "";
        Entry entry = head.next;
        while (null != entry)
        {
            if (entry.isCall)
            {
                final String next = apply(value, entry.op.h());
                if (null != next)
                {
                    final BitSet doneNext = (BitSet)done.clone();
                    doneNext.set(entry.op.id());
                    if (explored.add(new Explored(doneNext, next)))
                    {
                        if (explored.size() > MAX_EXPLORED)
                        {
                            return "gave up after exploring " + MAX_EXPLORED + " states";
                        }
                        stackEntries.add(entry);
                        stackValues.add(value);
                        done.set(entry.op.id());
                        value = next;
                        lift(entry);
                        entry = head.next;
                        continue;
                    }
                }
                entry = entry.next;
            }
            else
            {
                if (stackEntries.isEmpty())
                {
                    return "no valid order: " + entry.op.h().toJson() + " cannot take effect before it returns";
                }
                final Entry top = stackEntries.remove(stackEntries.size() - 1);
                value = stackValues.remove(stackValues.size() - 1);
                done.clear(top.op.id());
                unlift(top);
                entry = top.next;
            }
        }
        return null;
    }

    /**
     * @return the value after the operation, or null if its recorded output is impossible from this value.
     */
    private static String apply(final String value, final HistoryOperation h)
    {
        final boolean known = "ok".equals(h.status());
        switch (h.op())
        {
            case "get":
                return Objects.equals(value, h.output()) ? value : null;
            case "put":
                return h.value();
            case "cas":
                final boolean matches = Objects.equals(value, h.expected());
                if (!known)
                {
                    return matches ? h.value() : value;
                }
                if (matches != "true".equals(h.output()))
                {
                    return null;
                }
                return matches ? h.value() : value;
            default:
                throw new IllegalArgumentException("unknown op '" + h.op() + "' in " + h.toJson());
        }
    }

    private static void lift(final Entry call)
    {
        call.prev.next = call.next;
        if (null != call.next)
        {
            call.next.prev = call.prev;
        }
        final Entry ret = call.match;
        if (null != ret)
        {
            ret.prev.next = ret.next;
            if (null != ret.next)
            {
                ret.next.prev = ret.prev;
            }
        }
    }

    private static void unlift(final Entry call)
    {
        final Entry ret = call.match;
        if (null != ret)
        {
            ret.prev.next = ret;
            if (null != ret.next)
            {
                ret.next.prev = ret;
            }
        }
        call.prev.next = call;
        if (null != call.next)
        {
            call.next.prev = call;
        }
    }
}
