/**
 * The simulation: in-memory implementations of what a member is given from outside (network, log, snapshot
 * storage, wall clock), driven from one seed in one thread, with faults (crashes with torn and lost writes,
 * partitions, one-way loss, flapping links, clock steps). {@link SimServiceCluster} runs
 * three members of any service under them and checks, after every step, that members at the same position hold the
 * same state; {@link SeedReplay} tells whether a failing seed replays.
 * <p>
 * Owns: deterministic stand-ins for the I/O edge, and {@link FaultCounts}, what a run injected. A module of its own
 * so that no member's class path holds it; the test kit ({@code io.lockstep.testkit.ServiceSimulation}, for users'
 * services) builds on it, and the core's simulation tests live beside it.
 */
package io.lockstep.simulation;
