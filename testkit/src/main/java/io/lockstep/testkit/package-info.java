/**
 * Helpers for tests, the demo and benchmarks: {@link io.lockstep.testkit.LocalCluster} starts members as real JVM
 * processes on loopback (kill, restart, close), {@link io.lockstep.testkit.LogAudit} reads a member's log on disk to
 * check acknowledged entries. Nothing here runs inside a member, and a member never depends on it.
 */
package io.lockstep.testkit;
