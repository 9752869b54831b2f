package io.lockstep.consensus.service;

import io.lockstep.cluster.ClientSession;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ControlledMessageHandler;

/**
 * The consensus thread's side of a DEDICATED member: keeps its copy of the container (sessions with their egress
 * buffers, timers, service messages, run by a {@link RecordedService}) exactly where the service thread's container
 * was, by applying the same log entries and replaying, after each entry, what the service did while applying it
 * ({@link EffectRecorder}). The copy's outbox is the session layer, so egress, acknowledgements and session events
 * leave from the consensus thread, which owns the transport.
 * <p>
 * The copy never runs ahead of the service thread: it applies only up to the position the service thread published
 * after recording everything before it. Replayed egress must get the sequence the service's egress got; if not, the
 * copy no longer matches and the member stops rather than send a client something its service did not say.
 */
final class EffectReplay implements ControlledMessageHandler
{
    /** Listens for the records that are not effects on the tables. */
    interface Listener
    {
        /** The service thread's container and service state hashes at a position (the copy stands there too). */
        void onStateHash(long position, long containerHash, long serviceHash);

        /** A snapshot image is filled and handed over. */
        void onSnapshot(int imageIndex, long pauseNs);
    }

    private final ServiceHandoff handoff;
    private final Listener listener;
    private static final int RECORD_COST = 64;

    private ServiceContainer copy;
    private boolean discarding;
    private boolean waitingForLog;
    private int budget;

    EffectReplay(final ServiceHandoff handoff, final Listener listener)
    {
        this.handoff = handoff;
        this.listener = listener;
    }

    void copy(final ServiceContainer copy)
    {
        this.copy = copy;
    }

    /**
     * Replay what the service thread recorded and follow it.
     *
     * @return records replayed plus 1 if the copy moved.
     */
    int drain()
    {
        final long published = handoff.published();
        final long position = handoff.servicePosition();
        budget = handoff.replayBudgetBytes();
        waitingForLog = false;
        int work = handoff.effects.controlledRead(this, Integer.MAX_VALUE);
        if (waitingForLog)
        {
            return work; // see onMessage: nothing more until the log holds it again
        }
        if (budget <= 0)
        {
            // Cut short: records before the published position may still be waiting, so the copy stays where the
            // last one replayed left it, and the work is not marked seen (the next cycle comes at once).
            return work + 1;
        }
        handoff.consumed(published);
        if (copy.appliedPosition() < position && reached(position))
        {
            work++;
        }
        return work;
    }

    /**
     * Drop what is in the ring (the copy is about to be replaced: a snapshot install or close), handing back any
     * snapshot image in it.
     */
    void discard()
    {
        discarding = true;
        try
        {
            handoff.effects.controlledRead(this, Integer.MAX_VALUE);
            handoff.consumed(handoff.published());
        }
        finally
        {
            discarding = false;
        }
    }

    public Action onMessage(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (discarding)
        {
            if (EffectRecorder.SNAPSHOT == type)
            {
                handoff.freeImage((int)buffer.getLong(index + EffectRecorder.FIRST_OFFSET));
            }
            return Action.CONTINUE;
        }
        if (!reached(buffer.getLong(index + EffectRecorder.TAG_OFFSET)))
        {
            // The log no longer holds what the service thread applied: it was cut at a damaged frame and is being
            // fetched again (FrameRepair). The record waits, unconsumed, until the copy can reach it.
            waitingForLog = true;
            return Action.ABORT;
        }
        replay(type, buffer, index, length);
        budget -= RECORD_COST + (EffectRecorder.EGRESS == type ? length : 0);
        return budget > 0 ? Action.CONTINUE : Action.BREAK;
    }

    private void replay(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final long first = buffer.getLong(index + EffectRecorder.FIRST_OFFSET);
        switch (type)
        {
            case EffectRecorder.EGRESS ->
            {
                final long sequence = buffer.getLong(index + EffectRecorder.SECOND_OFFSET);
                final ClientSession session = copy.getClientSession(first);
                final long replayed = null == session ? ClientSession.CLOSED : session.offer(buffer,
                    index + EffectRecorder.EGRESS_PAYLOAD_OFFSET, length - EffectRecorder.EGRESS_PAYLOAD_OFFSET);
                if (replayed != sequence)
                {
                    throw new IllegalStateException("member " + copy.memberId() + ": the consensus thread's copy " +
                        "of session " + first + " gave egress sequence " + replayed + " where the service's gave " +
                        sequence + " at log position " + copy.logPosition() + ": the copy no longer matches");
                }
            }
            case EffectRecorder.TIMER_SCHEDULED ->
                copy.scheduleTimer(first, buffer.getLong(index + EffectRecorder.SECOND_OFFSET));
            case EffectRecorder.TIMER_CANCELLED -> copy.cancelTimer(first);
            case EffectRecorder.CLOSE_REQUESTED -> copy.closeClientSession(first);
            case EffectRecorder.SERVICE_MESSAGE -> copy.offer(buffer, index
                + EffectRecorder.SERVICE_MESSAGE_PAYLOAD_OFFSET,
                length - EffectRecorder.SERVICE_MESSAGE_PAYLOAD_OFFSET);
            case EffectRecorder.STATE_HASH ->
            {
                final long containerHash = first;
                // Tests run with assertions: the copy must hold what the service thread's container holds.
                assert copy.stateHash() == containerHash : "member " + copy.memberId() + ": the consensus thread's " +
                    "copy of the container differs from the service thread's at log position " + copy.appliedPosition();
                listener.onStateHash(copy.appliedPosition(), containerHash,
                    buffer.getLong(index + EffectRecorder.SECOND_OFFSET));
            }
            case EffectRecorder.SNAPSHOT ->
                listener.onSnapshot((int)first, buffer.getLong(index + EffectRecorder.SECOND_OFFSET));
            default -> throw new IllegalStateException("unknown effect record type " + type);
        }
    }

    /** @return true once the copy has applied the log up to a position the service thread applied to. */
    private boolean reached(final long position)
    {
        while (copy.appliedPosition() < position)
        {
            if (copy.apply(position, 1 << 20) <= 0)
            {
                return false;
            }
        }
        return true;
    }
}
