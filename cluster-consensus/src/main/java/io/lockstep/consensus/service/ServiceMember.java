package io.lockstep.consensus.service;

import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.RaftLog;
import io.lockstep.cluster.transport.Transport;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;

/**
 * A member running a service: consensus, the service container and client sessions in one duty cycle (the SHARED
 * threading mode: one thread per member, which suits a two-core machine). Consensus first (messages in, replication,
 * commit), then the container applies what is newly committed, then the session layer does its leader duties, and
 * what they sent is flushed.
 */
public final class ServiceMember implements Agent
{
    private final ConsensusAgent consensus;
    private final ServiceContainer container;
    private final SessionIngress sessions;
    private final Transport transport;

    /**
     * @param consensus         this member's consensus agent.
     * @param transport         the transport the consensus agent uses.
     * @param log               the consensus agent's log.
     * @param service           the user's service.
     * @param sessionTimeoutNs  silent sessions are closed after this.
     * @param maxSessions       bound on open sessions.
     * @param egressBufferBytes bytes of recent egress kept per session for resending after a failover.
     * @param maxTimers         bound on scheduled timers.
     * @param idleStrategy      handed to the service.
     */
    public ServiceMember(
        final ConsensusAgent consensus,
        final Transport transport,
        final RaftLog log,
        final ClusteredService service,
        final long sessionTimeoutNs,
        final int maxSessions,
        final int egressBufferBytes,
        final int maxTimers,
        final IdleStrategy idleStrategy)
    {
        this.consensus = consensus;
        this.transport = transport;
        this.sessions = new SessionIngress(consensus, transport, sessionTimeoutNs, egressBufferBytes / 2 - 64);
        this.container = new ServiceContainer(consensus.memberId(), service, log, log.startPosition(),
            new SessionTable(maxSessions, egressBufferBytes), new TimerTable(maxTimers), sessions, idleStrategy);
        sessions.container(container);
        consensus.clientIngress(sessions);
        container.start(null);
    }

    public int doWork()
    {
        int work = consensus.doWork();
        container.roleChanged(switch (consensus.role())
        {
            case LEADER -> ClusterRole.LEADER;
            case CANDIDATE -> ClusterRole.CANDIDATE;
            default -> ClusterRole.FOLLOWER;
        });
        work += container.apply(consensus.commitPosition(), 1 << 20);
        work += sessions.doWork();
        work += transport.flush(consensus.nowNs());
        return work;
    }

    public void onClose()
    {
        container.terminate();
        consensus.onClose();
    }

    public String roleName()
    {
        return "member-" + consensus.memberId();
    }

    public ConsensusAgent consensus()
    {
        return consensus;
    }

    public ServiceContainer container()
    {
        return container;
    }
}
