/**
 * Message transport between members, and between clients and members: the {@link
 * Transport} interface (what the core and the simulation see), non-blocking NIO TCP with
 * length-prefixed SBE frames ({@link TcpTransport}), and an idle strategy that waits in
 * the socket selector.
 * <p>
 * Never: lets a peer's garbage crash anything (it is disconnected with the reason logged), or blocks a caller.
 */
package io.lockstep.cluster.transport;
