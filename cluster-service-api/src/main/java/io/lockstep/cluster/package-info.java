/**
 * What users program against to run a replicated service on Lockstep.
 * <p>
 * A service implements {@link ClusteredService}. Each member of the cluster runs it over the
 * same committed log, so each holds the same state at the same position; clients keep talking to it through leader
 * failovers, each message applied exactly once. An echo service, the smallest useful one:
 * <pre>{@code
 * public final class EchoService implements ClusteredService
 * {
 *     public void onStart(Cluster cluster, SnapshotReader snapshot) { }
 *     public void onSessionOpen(ClientSession session, long timestamp) { }
 *     public void onSessionClose(ClientSession session, long timestamp, CloseReason reason) { }
 *
 *     public void onSessionMessage(
 *         ClientSession session, long timestamp, DirectBuffer buffer, int offset, int length)
 *     {
 *         // Egress is never back-pressured: a client too far behind is told it missed some (an egress gap).
 *         session.offer(buffer, offset, length);
 *     }
 *
 *     public void onServiceMessage(long timestamp, DirectBuffer buffer, int offset, int length) { }
 *     public void onTimerEvent(long correlationId, long timestamp) { }
 *     public void onTakeSnapshot(SnapshotWriter writer) { }
 *     public void onRoleChange(ClusterRole newRole) { }
 *     public void onTerminate(Cluster cluster) { }
 * }
 * }</pre>
 * Rules, because replicas must agree: time comes only from the timestamps handed in (log time: epoch nanoseconds
 * that never go back), never a clock; no unseeded randomness; no I/O. Timers are scheduled with
 * {@link Cluster#scheduleTimer} and fire as log entries. Clients use
 * {@link ClusterClient}.
 */
package io.lockstep.cluster;

import io.lockstep.cluster.client.ClusterClient;
