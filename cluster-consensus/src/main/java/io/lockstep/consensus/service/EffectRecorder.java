package io.lockstep.consensus.service;

import io.lockstep.cluster.CloseReason;
import io.lockstep.consensus.SnapshotImage;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * The outbox of a DEDICATED member's service-thread container: records what the service did, in order, into the
 * ring the consensus thread replays ({@link EffectReplay}). Each record starts with the log position the consensus
 * thread's copy must have applied up to before replaying it: the end of the entry being applied when the service
 * acted (or where applying stood, for what it did outside an entry: at start, on a role change).
 * <p>
 * What the container derives from entries alone (sessions opened, closed, ingress applied) is not recorded: the
 * copy derives it too. A full ring makes the service thread wait for the consensus thread: back pressure, never a
 * dropped record, since the copy must see everything the service did.
 */
final class EffectRecorder implements ServiceContainer.Outbox, ServiceContainer.ImageSource,
    ServiceContainer.SnapshotTaken
{
    static final int EGRESS = 1;
    static final int TIMER_SCHEDULED = 2;
    static final int TIMER_CANCELLED = 3;
    static final int CLOSE_REQUESTED = 4;
    static final int SERVICE_MESSAGE = 5;
    static final int STATE_HASH = 6;
    static final int SNAPSHOT = 7;

    static final int TAG_OFFSET = 0;
    static final int FIRST_OFFSET = 8;
    static final int SECOND_OFFSET = 16;
    static final int EGRESS_PAYLOAD_OFFSET = 24;
    static final int SERVICE_MESSAGE_PAYLOAD_OFFSET = 8;

    private final ServiceHandoff handoff;
    private final OneToOneRingBuffer ring;
    private final AtomicBuffer buffer;
    private ServiceContainer container;
    private boolean written;

    EffectRecorder(final ServiceHandoff handoff)
    {
        this.handoff = handoff;
        this.ring = handoff.effects;
        this.buffer = ring.buffer();
    }

    /**
     * @param container whose position tags the records (set before it starts).
     */
    void container(final ServiceContainer container)
    {
        this.container = container;
    }

    /**
     * @return true if anything was recorded since the last call.
     */
    boolean takeWritten()
    {
        final boolean w = written;
        written = false;
        return w;
    }

    public void onSessionOpened(final long sessionId, final long correlationId, final int leaderEndpoint)
    {
    }

    public void onIngressApplied(final long sessionId, final long appliedSequence)
    {
    }

    public void onSessionClosed(final long sessionId, final CloseReason reason)
    {
    }

    public void onEgress(
        final long sessionId, final long sequence, final DirectBuffer payload, final int offset, final int length)
    {
        final int index = claim(EGRESS, EGRESS_PAYLOAD_OFFSET + length);
        buffer.putLong(index + FIRST_OFFSET, sessionId);
        buffer.putLong(index + SECOND_OFFSET, sequence);
        buffer.putBytes(index + EGRESS_PAYLOAD_OFFSET, payload, offset, length);
        ring.commit(index);
    }

    public void onCloseRequested(final long sessionId)
    {
        final int index = claim(CLOSE_REQUESTED, FIRST_OFFSET + 8);
        buffer.putLong(index + FIRST_OFFSET, sessionId);
        ring.commit(index);
    }

    public void onTimerScheduled(final long correlationId, final long deadline)
    {
        final int index = claim(TIMER_SCHEDULED, SECOND_OFFSET + 8);
        buffer.putLong(index + FIRST_OFFSET, correlationId);
        buffer.putLong(index + SECOND_OFFSET, deadline);
        ring.commit(index);
    }

    public void onTimerCancelled(final long correlationId)
    {
        final int index = claim(TIMER_CANCELLED, FIRST_OFFSET + 8);
        buffer.putLong(index + FIRST_OFFSET, correlationId);
        ring.commit(index);
    }

    public void onServiceMessageOffered(final DirectBuffer payload, final int offset, final int length)
    {
        final int index = claim(SERVICE_MESSAGE, SERVICE_MESSAGE_PAYLOAD_OFFSET + length);
        buffer.putBytes(index + SERVICE_MESSAGE_PAYLOAD_OFFSET, payload, offset, length);
        ring.commit(index);
    }

    /**
     * The container's and the service's state hashes at a position where applying stopped, computed here so that the
     * consensus thread does not walk tables for them (tagged with the position, where the copy stands when it reads
     * this).
     */
    void stateHash(final long appliedPosition, final long containerHash, final long serviceHash)
    {
        final int index = claim(STATE_HASH, SECOND_OFFSET + 8, appliedPosition);
        buffer.putLong(index + FIRST_OFFSET, containerHash);
        buffer.putLong(index + SECOND_OFFSET, serviceHash);
        ring.commit(index);
    }

    /**
     * A snapshot image is filled: the consensus thread hands it to storage.
     */
    void snapshotTaken(final int imageIndex, final long pauseNs)
    {
        final int index = claim(SNAPSHOT, SECOND_OFFSET + 8);
        buffer.putLong(index + FIRST_OFFSET, imageIndex);
        buffer.putLong(index + SECOND_OFFSET, pauseNs);
        ring.commit(index);
    }

    /**
     * The image source of the service-thread container: one of the handoff's images that the consensus thread is not
     * holding; waits for one if all three are held (storage writing one, one waiting, and the last one not yet
     * collected).
     */
    public SnapshotImage image(final long logPosition, final long term, final long timestamp, final int sizeHint)
    {
        int i;
        while ((i = handoff.claimImage()) < 0)
        {
            waitForConsensus();
        }
        final SnapshotImage image = handoff.images[i];
        if (null == image)
        {
            handoff.images[i] = new SnapshotImage(logPosition, term, timestamp, sizeHint);
            return handoff.images[i];
        }
        return image.reset(logPosition, term, timestamp);
    }

    public void onSnapshotTaken(final SnapshotImage image, final long pauseNs)
    {
        snapshotTaken(indexOf(image), pauseNs);
    }

    private int indexOf(final SnapshotImage image)
    {
        for (int i = 0; i < ServiceHandoff.IMAGES; i++)
        {
            if (handoff.images[i] == image)
            {
                return i;
            }
        }
        throw new IllegalStateException("snapshot image not from this member's handoff");
    }

    private int claim(final int type, final int length)
    {
        return claim(type, length, container.logPosition());
    }

    private int claim(final int type, final int length, final long tag)
    {
        int index;
        while ((index = ring.tryClaim(type, length)) < 0)
        {
            waitForConsensus();
        }
        buffer.putLong(index + TAG_OFFSET, tag);
        written = true;
        return index;
    }

    private void waitForConsensus()
    {
        if (!handoff.ownThread())
        {
            // One thread drives both sides (the simulation): waiting here would wait forever.
            throw new IllegalStateException("effect ring full or no snapshot image free with both sides on one thread");
        }
        // What is recorded so far may be all the consensus thread needs to make room: let it see it.
        handoff.publish(container.appliedPosition());
        if (Thread.currentThread().isInterrupted())
        {
            throw new AgentTerminationException("service thread interrupted while waiting for the consensus thread");
        }
        Thread.yield();
    }
}
