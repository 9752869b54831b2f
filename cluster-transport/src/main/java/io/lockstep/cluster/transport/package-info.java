/**
 * The wire: message transport between members, and between clients, tools and members. The {@link Transport}
 * interface is what the core and the simulation see; {@link TcpTransport} is non-blocking NIO TCP with
 * length-prefixed SBE frames, split by job: {@link ConnectionReader} turns bytes into messages and checks each with
 * the {@link FrameValidator} before any decoder reads it, {@link HelloHandshake} finds out who is on the other end
 * (the member and tool secrets, {@link ClusterSecret}), {@link ConnectionTable} keeps the books the bounds are
 * checked against, and {@link TlsPolicy} and {@link TlsLink} encrypt the links that must be. {@link
 * SelectorIdleStrategy} lets a member's thread wait in the socket selector.
 * <p>
 * Never: lets a peer's garbage crash anything (it is disconnected with the reason logged), trusts a connection that
 * has not proved a secret where one is configured, or blocks a caller.
 */
package io.lockstep.cluster.transport;
