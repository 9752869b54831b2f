package io.lockstep.cluster.transport;

/**
 * A cluster member as configured.
 *
 * @param id     member id, 0 to {@link ConsensusConfig#MAX_MEMBERS} - 1.
 * @param host   host to connect to.
 * @param port   port it listens on.
 * @param voting false for a non-voting member (a warm standby): it receives the log but never votes, never stands
 *               for election and never counts toward a quorum.
 */
public record Member(int id, String host, int port, boolean voting)
{
}
