package io.lockstep.consensus.service;

import org.agrona.collections.Long2LongHashMap;

import java.util.TreeSet;

/**
 * Timers the service scheduled: replicated state, changed only while applying log entries, so every member holds
 * the same table. A timer fires as a log entry that the leader appends once the deadline passes in its clock; the
 * entry is applied like any other, at the same position everywhere. A timer-event entry for a timer no longer in the
 * table (cancelled meanwhile, or appended twice across a leader change) is ignored, which makes firing idempotent.
 */
public final class TimerTable
{
    private record Due(long deadline, long correlationId) implements Comparable<Due>
    {
        public int compareTo(final Due o)
        {
            return deadline != o.deadline ? Long.compare(deadline, o.deadline) :
                Long.compare(correlationId, o.correlationId);
        }
    }

    private final int maxTimers;
    private final Long2LongHashMap deadlines = new Long2LongHashMap(Long.MIN_VALUE);
    private final TreeSet<Due> byDeadline = new TreeSet<>();

    /**
     * @param maxTimers bound on scheduled timers.
     */
    public TimerTable(final int maxTimers)
    {
        this.maxTimers = maxTimers;
    }

    /**
     * Schedule, or move, a timer.
     *
     * @return false if the table is full.
     */
    public boolean schedule(final long correlationId, final long deadline)
    {
        final long previous = deadlines.get(correlationId);
        if (Long.MIN_VALUE != previous)
        {
            byDeadline.remove(new Due(previous, correlationId));
        }
        else if (deadlines.size() >= maxTimers)
        {
            return false;
        }
        deadlines.put(correlationId, deadline);
        byDeadline.add(new Due(deadline, correlationId));
        return true;
    }

    /**
     * @return true if the timer was scheduled.
     */
    public boolean cancel(final long correlationId)
    {
        final long deadline = deadlines.remove(correlationId);
        if (Long.MIN_VALUE == deadline)
        {
            return false;
        }
        byDeadline.remove(new Due(deadline, correlationId));
        return true;
    }

    /**
     * Apply a timer-event entry.
     *
     * @return true if the timer was scheduled (and now fires); false if the entry is stale.
     */
    public boolean fire(final long correlationId)
    {
        return cancel(correlationId);
    }

    /**
     * For the leader: the earliest timer due at or before now that is not already being fired.
     *
     * @param nowNs              the leader's clock.
     * @param afterDeadline      with afterCorrelationId: skip timers ordered at or before this one (already
     *                           appended); Long.MIN_VALUE for none.
     * @param afterCorrelationId see afterDeadline.
     * @return the correlation id, or {@link Long#MIN_VALUE} if none is due.
     */
    public long nextDue(final long nowNs, final long afterDeadline, final long afterCorrelationId)
    {
        final Due from = new Due(afterDeadline, afterCorrelationId);
        final Due next = byDeadline.higher(from);
        return null != next && next.deadline <= nowNs ? next.correlationId : Long.MIN_VALUE;
    }

    /**
     * @return the deadline of a scheduled timer, or {@link Long#MIN_VALUE}.
     */
    public long deadline(final long correlationId)
    {
        return deadlines.get(correlationId);
    }

    public int size()
    {
        return deadlines.size();
    }

    /**
     * @return a hash of the table, for comparing members.
     */
    public long stateHash()
    {
        long h = 0xcbf29ce484222325L;
        for (final Due d : byDeadline)
        {
            h = (h ^ d.deadline) * 0x100000001b3L;
            h = (h ^ d.correlationId) * 0x100000001b3L;
        }
        return h;
    }
}
