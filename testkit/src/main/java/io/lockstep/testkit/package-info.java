/**
 * For your tests (test scope): what a failover test of your own service needs, and a simulation of it.
 * <ul>
 *   <li>{@link ServiceSimulation}: three members of your service in one thread, from a seed,
 *   through crashes, lost writes, partitions, snapshots and clock steps, checking after every step that members at
 *   the same log position hold the same state. Start here.</li>
 *   <li>{@link TestCluster}: three members of your service in containers where a Docker engine
 *   answers ({@link ContainerCluster}: kill, pause, isolate, restart, wipe), or as processes on
 *   loopback where none does ({@link ProcessCluster}), with a client and an admin client.</li>
 *   <li>{@link LogAudit}: reads a member's log on disk, to check what was acknowledged.</li>
 * </ul>
 * Nothing here runs inside a member. To start members in your test's own JVM, use
 * {@code ClusterNode.builder()}.
 */
package io.lockstep.testkit;

