package io.lockstep.consensus.service;

import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.transport.SelectorIdleStrategy;
import io.lockstep.consensus.SnapshotImage;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * What the two threads of a DEDICATED member share, and nothing else: the consensus thread publishes the commit
 * position and the role; the service thread applies committed entries with the user's service and records what the
 * service did (egress, timers, service messages, close requests, snapshots) in a one-to-one ring, then publishes how
 * far it applied. The consensus thread replays those records into its own copy of the container's tables
 * ({@link EffectReplay}), which is what the session layer reads and sends from.
 * <p>
 * Single writer everywhere: each field below is written by one thread only (named on it). Wake-ups use the
 * store-then-check pattern on both sides (a volatile flag set before the last look for work, a volatile publish
 * before looking at the flag), so one side always sees the other and no wake is lost.
 */
public final class ServiceHandoff implements SelectorIdleStrategy.SleepGuard
{
    /** Records of effects in flight between the threads; a service that outruns the consensus thread waits. */
    static final int RING_CAPACITY = 8 * 1024 * 1024;
    /** Snapshot images: one being written by storage, one waiting, one being filled by the service thread. */
    static final int IMAGES = 3;
    private static final long MAX_PARK_NS = 1_000_000;

    final OneToOneRingBuffer effects = new OneToOneRingBuffer(
        new UnsafeBuffer(ByteBuffer.allocateDirect(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH)));
    /** Written by the service thread before the ring record naming the index (the record publishes it). */
    final SnapshotImage[] images = new SnapshotImage[IMAGES];
    /** 1 while the service thread may fill the image: set by the consensus thread, cleared by the service thread. */
    private final AtomicIntegerArray imageFree = new AtomicIntegerArray(IMAGES);
    private final boolean ownThread;
    private int replayBudgetBytes = DEFAULT_REPLAY_BUDGET_BYTES;

    /**
     * Bytes of egress (and 64 per record) the consensus thread replays per duty cycle at most: what is sent in a
     * cycle must fit a client connection's write buffer (about 320 KiB) until the cycle's flush, or it is dropped and
     * the client has to resume. The service thread may have recorded far more while the consensus thread was busy
     * (measured before this bound: 3,500-7,300 client resumes at 100-200k msg/s); the rest waits a cycle.
     */
    static final int DEFAULT_REPLAY_BUDGET_BYTES = 64 * 1024;

    // Consensus thread writes.
    private volatile long commitPosition;
    private volatile ClusterRole role = ClusterRole.FOLLOWER;
    private volatile boolean pauseRequested;
    private volatile boolean consensusSleeping;
    private Runnable wakeConsensus = () -> { };
    private long consumed;

    // Service thread writes.
    private volatile long published;
    private volatile long servicePosition;
    private volatile boolean paused;
    private volatile boolean serviceParked;
    private volatile boolean serviceStopped;
    private volatile Throwable serviceError;
    private volatile Thread serviceThread;
    private long seenCommit;
    private ClusterRole seenRole;

    /**
     * @param ownThread true if the service agent runs on a thread of its own; false if whoever drives the consensus
     *                  side also drives the service agent (the simulation: both in one thread, interleaved by seed).
     */
    public ServiceHandoff(final boolean ownThread)
    {
        this.ownThread = ownThread;
        for (int i = 0; i < IMAGES; i++)
        {
            imageFree.set(i, 1);
        }
    }

    /**
     * @param bytes the replay bound per consensus duty cycle (the simulation varies it, so that replays cut short
     *              are exercised).
     * @return this.
     */
    public ServiceHandoff replayBudgetBytes(final int bytes)
    {
        if (bytes < 1)
        {
            throw new IllegalArgumentException("replay budget must be positive: " + bytes);
        }
        this.replayBudgetBytes = bytes;
        return this;
    }

    int replayBudgetBytes()
    {
        return replayBudgetBytes;
    }

    boolean ownThread()
    {
        return ownThread;
    }

    /**
     * @param wake wakes the consensus thread from its selector wait (its transport's wakeup); set before start.
     */
    public void wakeConsensus(final Runnable wake)
    {
        this.wakeConsensus = wake;
    }

    // ------------------------------------------------------------------------------------- consensus thread

    void publishConsensus(final long commit, final ClusterRole newRole)
    {
        final boolean changed = commit > commitPosition || newRole != role;
        if (newRole != role)
        {
            role = newRole;
        }
        if (commit > commitPosition)
        {
            commitPosition = commit;
        }
        if (changed && serviceParked)
        {
            LockSupport.unpark(serviceThread);
        }
    }

    void requestPause()
    {
        pauseRequested = true;
        if (serviceParked)
        {
            LockSupport.unpark(serviceThread);
        }
    }

    /**
     * Let a paused service thread run again, from what the consensus thread set up while it was paused (this
     * volatile write publishes that).
     */
    void resume(final long position)
    {
        servicePosition = position;
        paused = false;
        pauseRequested = false;
        if (serviceParked)
        {
            LockSupport.unpark(serviceThread);
        }
    }

    boolean isPaused()
    {
        return paused;
    }

    long published()
    {
        return published;
    }

    long servicePosition()
    {
        return servicePosition;
    }

    boolean serviceStopped()
    {
        return serviceStopped;
    }

    Throwable serviceError()
    {
        return serviceError;
    }

    void freeImage(final int index)
    {
        imageFree.set(index, 1);
    }

    /**
     * @param seen the {@link #published()} count the consensus thread has replayed up to.
     */
    void consumed(final long seen)
    {
        consumed = seen;
    }

    public boolean beforeSleep()
    {
        consensusSleeping = true;
        if (published != consumed || serviceStopped)
        {
            consensusSleeping = false;
            return false;
        }
        return true;
    }

    public void afterSleep()
    {
        consensusSleeping = false;
    }

    // --------------------------------------------------------------------------------------- service thread

    long commitPosition()
    {
        return commitPosition;
    }

    ClusterRole role()
    {
        return role;
    }

    boolean pauseRequested()
    {
        return pauseRequested;
    }

    void ackPause()
    {
        paused = true;
        wake();
    }

    /**
     * Everything recorded so far is in the ring, and entries are applied up to the position: the consensus thread may
     * follow.
     */
    void publish(final long position)
    {
        servicePosition = position;
        published = published + 1;
        wake();
    }

    private void wake()
    {
        if (consensusSleeping)
        {
            wakeConsensus.run();
        }
    }

    /**
     * The commit position and role the service thread's last duty cycle acted on.
     */
    void seen(final long commit, final ClusterRole role)
    {
        seenCommit = commit;
        seenRole = role;
    }

    /**
     * Park the service thread until the commit position or role moves from what it last acted on, a pause is asked,
     * or a bound passes.
     */
    void parkService()
    {
        final long commitSeen = seenCommit;
        final ClusterRole roleSeen = seenRole;
        if (null == serviceThread)
        {
            serviceThread = Thread.currentThread();
        }
        serviceParked = true;
        if (commitPosition == commitSeen && role == roleSeen && !pauseRequested)
        {
            LockSupport.parkNanos(MAX_PARK_NS);
        }
        serviceParked = false;
    }

    void serviceStopped(final Throwable error)
    {
        serviceError = error;
        serviceStopped = true;
        wake();
    }

    /**
     * @return true if the service thread could claim an image now (it applies nothing until it can: a snapshot entry
     * may be next).
     */
    boolean imageAvailable()
    {
        for (int i = 0; i < IMAGES; i++)
        {
            if (imageFree.get(i) == 1)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the index of an image the service thread may fill, or -1 if all are with the consensus thread.
     */
    int claimImage()
    {
        for (int i = 0; i < IMAGES; i++)
        {
            if (imageFree.get(i) == 1)
            {
                imageFree.set(i, 0);
                return i;
            }
        }
        return -1;
    }
}
