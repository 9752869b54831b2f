/**
 * The cluster client: one session kept across leader failovers, exactly once
 * ({@link ClusterClient}, over the duty-cycle
 * {@link SessionClient} that the simulation drives too).
 * <p>
 * Never: blocks inside {@code poll()}, throws for back pressure, or hides lost egress (a gap is reported).
 */
package io.lockstep.cluster.client;
