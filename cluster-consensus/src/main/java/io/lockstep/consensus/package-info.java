/**
 * Raft election, streamed replication and commit, client sessions, timers, the service container, the node
 * launcher and the cluster tool. Filled in by the consensus work.
 */
package io.lockstep.consensus;
