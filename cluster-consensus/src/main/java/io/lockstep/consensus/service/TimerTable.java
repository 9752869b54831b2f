package io.lockstep.consensus.service;

import org.agrona.collections.Long2LongHashMap;

import java.util.TreeSet;

/**
 * Timers the service scheduled: replicated state, changed only while applying log entries, so every member holds
 * the same table. A timer fires as a log entry that the leader appends once the deadline passes in its clock; the
 * entry is applied like any other, at the same position everywhere. The entry names the deadline it fires for, and
 * applies only if the timer is still scheduled for exactly that deadline: an entry for a cancelled timer, a duplicate
 * appended across a leader change, or one for an earlier schedule of a re-armed timer is ignored.
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
     * @return true if the timer was scheduled for this deadline (and now fires); false if the entry is stale.
     */
    public boolean fire(final long correlationId, final long deadline)
    {
        return deadlines.get(correlationId) == deadline && cancel(correlationId);
    }

    /** Receives due timers. */
    @FunctionalInterface
    public interface DueTimerHandler
    {
        void onDue(long correlationId, long deadline);
    }

    /**
     * For the leader: every timer due at or before now, earliest first.
     */
    public void forEachDue(final long nowNs, final DueTimerHandler handler)
    {
        // Checked first so that the common case, nothing due, costs no iterator.
        if (byDeadline.isEmpty() || byDeadline.first().deadline > nowNs)
        {
            return;
        }
        for (final Due due : byDeadline)
        {
            if (due.deadline > nowNs)
            {
                return;
            }
            handler.onDue(due.correlationId, due.deadline);
        }
    }

    /**
     * @return the deadline of a scheduled timer, or {@link Long#MIN_VALUE}.
     */
    /**
     * Visit every scheduled timer in deadline order (for a snapshot).
     */
    public void forEach(final DueTimerHandler handler)
    {
        for (final Due due : byDeadline)
        {
            handler.onDue(due.correlationId, due.deadline);
        }
    }

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
        if (byDeadline.isEmpty())
        {
            // No iterator to allocate for the common case of no timers.
            return h;
        }
        for (final Due d : byDeadline)
        {
            h = (h ^ d.deadline) * 0x100000001b3L;
            h = (h ^ d.correlationId) * 0x100000001b3L;
        }
        return h;
    }
}
