/**
 * The simulation: in-memory implementations of what a member is given from outside (network, log, snapshot
 * storage, wall clock), driven from one seed in one thread, with faults (crashes with torn and lost writes,
 * partitions, one-way loss, flapping links, clock steps). {@link SimServiceCluster} runs
 * three members of any service under them and checks, after every step, that members at the same position hold the
 * same state; {@link SeedReplay} tells whether a failing seed replays.
 * <p>
 * Owns: deterministic stand-ins for the I/O edge. Never used by a member process; it ships in this jar because the
 * core's own tests and the test kit ({@code io.lockstep.testkit.ServiceSimulation}, for users' services) both
 * drive it, and a separate module would depend on this one and be depended on by its tests.
 */
package io.lockstep.consensus.sim;
