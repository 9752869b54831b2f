/**
 * The operator's view: {@code bin/lockstep tool} ({@link io.lockstep.consensus.tool.ClusterTool}: status, append,
 * step-down, snapshot) over a blocking {@link AdminClient} that speaks the member protocol
 * as a client.
 * <p>
 * Owns: waiting with deadlines on the wall clock, and key=value output scripts can read.
 * <p>
 * Never: used inside a member, and never trusted for exactly-once delivery (that is the session client's job): an
 * append whose answer is lost may or may not have been committed.
 */
package io.lockstep.consensus.tool;
