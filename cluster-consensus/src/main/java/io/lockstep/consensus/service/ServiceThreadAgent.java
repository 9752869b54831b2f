package io.lockstep.consensus.service;

import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.BlockSource;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;

/**
 * The service thread of a DEDICATED member: applies committed entries with the user's service, on a reader of its
 * own, and records what the service did for the consensus thread ({@link EffectRecorder}). It reads only what the
 * consensus thread published (commit position, role) and writes only the ring and what it published back, so the
 * two threads share no other state.
 * <p>
 * Asked to pause (before a snapshot install resets the log, and before the member closes), it closes its reader,
 * says so, and does nothing until resumed with the containers the consensus thread set up meanwhile.
 */
public final class ServiceThreadAgent implements Agent
{
    private final ServiceHandoff handoff;
    private final String roleName;
    private EffectRecorder recorder;
    private ServiceContainer container;
    private ClusteredService service;
    private BlockSource reader;
    private long hashedPosition = -1;

    ServiceThreadAgent(final ServiceHandoff handoff, final String roleName)
    {
        this.handoff = handoff;
        this.roleName = roleName;
    }

    /**
     * Set what to run: before the thread starts, or while it is paused (the resume publishes it).
     */
    void run(
        final ServiceContainer container, final ClusteredService service, final BlockSource reader,
        final EffectRecorder recorder)
    {
        this.container = container;
        this.service = service;
        this.reader = reader;
        this.recorder = recorder;
        this.hashedPosition = -1;
    }

    public int doWork()
    {
        try
        {
            return duty();
        }
        catch (final AgentTerminationException ex)
        {
            handoff.serviceStopped(ex.getCause());
            throw ex;
        }
        catch (final Throwable t)
        {
            // The consensus thread sees it and stops the member, as a service error on one thread would.
            handoff.serviceStopped(t);
            throw new AgentTerminationException(t);
        }
    }

    private int duty()
    {
        if (handoff.pauseRequested())
        {
            // Asked again after a resume this thread has not run since: the reader is the new one, so close it too.
            if (!handoff.isPaused())
            {
                reader.close();
                handoff.ackPause();
            }
            return 0;
        }
        final long commit = handoff.commitPosition();
        final ClusterRole role = handoff.role();
        handoff.seen(commit, role);
        container.roleChanged(role);
        // A snapshot entry may be next, and its image must be free before it is applied.
        int work = handoff.imageAvailable() ? container.apply(commit, 1 << 20) : 0;
        if (0 == work && container.appliedPosition() != hashedPosition)
        {
            // Applying has stopped for now: hash here, once, so that status can compare members.
            hashedPosition = container.appliedPosition();
            recorder.stateHash(hashedPosition, container.stateHash(), service.stateHash());
            work++;
        }
        if (recorder.takeWritten() || work > 0)
        {
            handoff.publish(container.appliedPosition());
        }
        return work;
    }

    public void onClose()
    {
        if (!handoff.serviceStopped())
        {
            handoff.serviceStopped(null);
        }
    }

    public String roleName()
    {
        return roleName;
    }
}
