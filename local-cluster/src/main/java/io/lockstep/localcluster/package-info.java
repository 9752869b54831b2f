/**
 * A whole cluster as processes on this machine ({@link LocalCluster}): members and standbys started from generated
 * configuration files on ports from {@link FreePorts}, killed with SIGKILL and restarted for real, optionally behind
 * a {@link DelayProxy} that stands in for a link between zones. What the demo and the benchmarks run, and what the
 * test kit's process clusters are made of.
 * <p>
 * Never: on a member's class path ({@link LocalCluster#memberClassPath()} leaves it off the members it starts).
 */
package io.lockstep.localcluster;
