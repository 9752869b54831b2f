package io.lockstep.consensus;

import org.agrona.concurrent.EpochNanoClock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A member's recent errors, distinct by kind and message, each with a count and the wall-clock times it was first
 * and last seen: what {@code tool errors} prints. Bounded: at most {@link #MAX_DISTINCT} distinct errors are kept,
 * and a new one beyond that replaces the one seen longest ago, so a flood of garbage from one peer cannot grow the
 * member's memory. Member thread only (recorded and read there); errors are rare, so allocating here is fine.
 */
public final class MemberErrors
{
    public static final int MAX_DISTINCT = 64;

    /** One distinct error. */
    public record Entry(String kind, String message, long count, long firstEpochNs, long lastEpochNs)
    {
    }

    private static final class Slot
    {
        final String kind;
        final String message;
        long count;
        final long firstEpochNs;
        long lastEpochNs;

        Slot(final String kind, final String message, final long nowNs)
        {
            this.kind = kind;
            this.message = message;
            this.firstEpochNs = nowNs;
            this.lastEpochNs = nowNs;
        }
    }

    private final EpochNanoClock wallClock;
    private final MemberMetrics metrics;
    private final ArrayList<Slot> slots = new ArrayList<>();
    private long total;

    MemberErrors(final EpochNanoClock wallClock, final MemberMetrics metrics)
    {
        this.wallClock = wallClock;
        this.metrics = metrics;
    }

    /**
     * @param kind    a short stable word: {@code connection}, {@code untrusted-request}, {@code client-auth}, ...
     * @param message what happened, naming the peer and the problem.
     */
    public void record(final String kind, final String message)
    {
        final long now = wallClock.nanoTime();
        total++;
        metrics.increment(MemberMetrics.ERRORS);
        Slot oldest = null;
        for (int i = 0; i < slots.size(); i++)
        {
            final Slot s = slots.get(i);
            if (s.kind.equals(kind) && s.message.equals(message))
            {
                s.count++;
                s.lastEpochNs = now;
                return;
            }
            if (null == oldest || s.lastEpochNs < oldest.lastEpochNs)
            {
                oldest = s;
            }
        }
        if (slots.size() >= MAX_DISTINCT)
        {
            slots.remove(oldest);
        }
        final Slot slot = new Slot(kind, message, now);
        slot.count = 1;
        slots.add(slot);
    }

    /**
     * @return every error recorded since start, including those no longer kept.
     */
    public long total()
    {
        return total;
    }

    /**
     * @return the distinct errors kept, most recently seen first.
     */
    public List<Entry> recent()
    {
        final List<Entry> entries = new ArrayList<>(slots.size());
        for (final Slot s : slots)
        {
            entries.add(new Entry(s.kind, s.message, s.count, s.firstEpochNs, s.lastEpochNs));
        }
        entries.sort(Comparator.comparingLong(Entry::lastEpochNs).reversed());
        return entries;
    }
}
