/**
 * The service container: client sessions, timers and service messages as replicated state, applied from committed
 * log entries only, one at a time, identically on every member
 * ({@link ServiceContainer}); the leader's duties of turning client traffic, due timers
 * and silent sessions into log entries ({@link SessionIngress}); snapshots of all of it
 * at one log position; and {@link ServiceMember}, the agent that runs the core and the
 * container together.
 * <p>
 * Owns: the session table, per-session egress buffers, the timer table, the service-message queue.
 * <p>
 * Never: changes replicated state except by applying a committed entry; reads a clock for anything replicated (log
 * time comes from the entry); lets a service's exception pass (it stops the member: a replica that skipped an entry
 * could no longer be trusted).
 */
package io.lockstep.consensus.service;
