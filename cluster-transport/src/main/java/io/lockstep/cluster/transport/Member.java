package io.lockstep.cluster.transport;

/**
 * A cluster member as configured.
 *
 * @param id     member id, 0 to 62 (the consensus module's bound is 63 members).
 * @param host   host to connect to.
 * @param port   port it listens on.
 * @param voting false for a non-voting member (a warm standby): it receives the log but never votes, never stands
 *               for election and never counts toward a quorum.
 */
public record Member(int id, String host, int port, boolean voting)
{
}
