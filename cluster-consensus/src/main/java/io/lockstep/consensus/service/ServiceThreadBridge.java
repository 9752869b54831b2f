package io.lockstep.consensus.service;

import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.BlockSource;
import io.lockstep.consensus.RaftLog;
import io.lockstep.consensus.SnapshotImage;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;

import java.util.function.Predicate;

/**
 * The consensus thread's side of a DEDICATED member ({@link ServiceMember} in that mode): sets up the service
 * thread's container and its own copy, publishes the commit position and role to the service thread, replays what
 * the service did into the copy, hands filled snapshot images to the member, gives images back once storage is done
 * with them, and pauses the service thread when the log is about to be reset or closed.
 */
final class ServiceThreadBridge implements EffectReplay.Listener
{
    private final int memberId;
    private final ServiceHandoff handoff;
    private final EffectReplay replay;
    private final ServiceThreadAgent agent;
    private final ServiceContainer.SnapshotTaken snapshotSink;
    private final Predicate<SnapshotImage> imageInUse;
    private final boolean[] held = new boolean[ServiceHandoff.IMAGES];
    private ServiceContainer serviceContainer;
    private ServiceContainer copy;
    private long hashedPosition = -1;
    private long hashedState;

    /**
     * @param snapshotSink told of each snapshot image the service thread filled (on the consensus thread).
     * @param imageInUse   whether the member still needs an image it was given (writing it, or holding it to write).
     */
    ServiceThreadBridge(
        final int memberId, final ServiceHandoff handoff, final ServiceContainer.SnapshotTaken snapshotSink,
        final Predicate<SnapshotImage> imageInUse)
    {
        this.memberId = memberId;
        this.handoff = handoff;
        this.snapshotSink = snapshotSink;
        this.imageInUse = imageInUse;
        this.replay = new EffectReplay(handoff, this);
        this.agent = new ServiceThreadAgent(handoff, "service-" + memberId);
    }

    ServiceThreadAgent agent()
    {
        return agent;
    }

    /**
     * Set up both containers from the start position (or a snapshot image) and start the service: before the service
     * thread runs, or while it is paused. The service's {@code onStart} runs here, on the consensus thread; the
     * service thread's first duty cycle sees everything it did (the resume, or the thread's start, publishes it).
     *
     * @return the copy, for the session layer to read.
     */
    ServiceContainer start(
        final ClusteredService service, final RaftLog log, final long startPosition, final SnapshotImage image,
        final ServiceContainer.Outbox sessions, final int maxSessions, final int egressBufferBytes,
        final int maxTimers, final IdleStrategy idleStrategy, final NanoClock pauseClock)
    {
        copy = new ServiceContainer(memberId, new RecordedService(service.appVersion()), log, startPosition,
            new SessionTable(maxSessions, egressBufferBytes), new TimerTable(maxTimers), sessions, idleStrategy);
        copy.serialisesSnapshots(false);
        replay.copy(copy);
        final EffectRecorder recorder = new EffectRecorder(handoff);
        final BlockSource reader = log.newBlockSource();
        serviceContainer = new ServiceContainer(memberId, service, reader, startPosition,
            new SessionTable(maxSessions, egressBufferBytes), new TimerTable(maxTimers), recorder, idleStrategy);
        recorder.container(serviceContainer);
        serviceContainer.stopAfterSnapshot(true);
        serviceContainer.imageSource(recorder);
        serviceContainer.onSnapshotTaken(recorder, pauseClock);
        if (null == image)
        {
            copy.start(null);
            serviceContainer.start(null);
        }
        else
        {
            copy.startFrom(image);
            serviceContainer.startFrom(image);
        }
        hashedPosition = -1;
        agent.run(serviceContainer, service, reader, recorder);
        return copy;
    }

    /**
     * One consensus-thread duty cycle's part: publish, then follow the service thread.
     *
     * @return work done.
     */
    int doWork(final long commitPosition, final ClusterRole role)
    {
        if (handoff.serviceStopped())
        {
            final Throwable error = handoff.serviceError();
            throw new IllegalStateException("member " + memberId + ": the service thread stopped" +
                (null == error ? "" : " on an error: " + error), error);
        }
        handoff.publishConsensus(commitPosition, role);
        final int work = replay.drain();
        releaseImages();
        return work;
    }

    /**
     * Give back the images the member no longer needs.
     */
    void releaseImages()
    {
        for (int i = 0; i < held.length; i++)
        {
            if (held[i] && !imageInUse.test(handoff.images[i]))
            {
                held[i] = false;
                handoff.freeImage(i);
            }
        }
    }

    /**
     * Stop the service thread reading the log (and the service running) until {@link #resume}: what it recorded
     * meanwhile is dropped, since the copy is about to be replaced or closed. Returns once it is paused or stopped.
     */
    void pause()
    {
        handoff.requestPause();
        while (!handoff.isPaused() && !handoff.serviceStopped())
        {
            replay.discard();
            releaseImages();
            if (handoff.ownThread())
            {
                Thread.yield();
            }
            else
            {
                agent.doWork();
            }
        }
        replay.discard();
        releaseImages();
    }

    /**
     * Let the service thread run what {@link #start} set up while it was paused.
     */
    void resume(final long position)
    {
        handoff.resume(position);
    }

    /**
     * Stop the service (its {@code onTerminate}) once the service thread is paused.
     */
    void terminateService()
    {
        serviceContainer.terminate();
    }

    /**
     * @return the position the last state hash is from (-1 before the first).
     */
    long hashedPosition()
    {
        return hashedPosition;
    }

    /**
     * @return the copy's tables and the service's state hashed at {@link #hashedPosition()}.
     */
    long stateHash()
    {
        return hashedState;
    }

    public void onStateHash(final long position, final long containerHash, final long serviceHash)
    {
        hashedPosition = position;
        hashedState = containerHash * 31 + serviceHash;
    }

    public void onSnapshot(final int imageIndex, final long pauseNs)
    {
        held[imageIndex] = true;
        snapshotSink.onSnapshotTaken(handoff.images[imageIndex], pauseNs);
    }
}
