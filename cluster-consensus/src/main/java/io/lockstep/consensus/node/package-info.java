/**
 * One member as a process: the configuration file with every key checked and named in its errors
 * ({@link NodeConfig}), and {@link ClusterNode}, which wires the
 * real clock, TCP transport, file storage and the service container to the core and runs them on one thread.
 * <p>
 * Owns: the edge where the world comes in (wall clock, seed, sockets, files, JVM shutdown).
 * <p>
 * Never: holds a Raft rule. Any error inside the agent stops the process (exit 1) rather than let it run on with
 * state it cannot trust.
 */
package io.lockstep.consensus.node;
