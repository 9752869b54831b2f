/**
 * The core's storage interfaces over real files: the Raft log over archive-log
 * ({@link ArchiveRaftLog}, with the base file that names where a purged log starts),
 * the durable term and vote ({@link FileElectionState}), and snapshots written, loaded,
 * retained and installed through archive-log's snapshot store
 * ({@link FileSnapshotStorage}).
 * <p>
 * Owns: every file of a member's data directory, and the crash safety of each change to them (write, fsync, rename).
 * <p>
 * Never: decides anything Raft decides (what to purge, what is committed, whom to vote for): it does what the core
 * asks, durably, or fails loudly. Its own threads (purging, writing snapshots) only ever touch files, never state
 * the core reads.
 */
package io.lockstep.consensus.storage;
