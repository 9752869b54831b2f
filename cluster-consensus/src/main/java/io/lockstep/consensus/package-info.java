/**
 * The Raft core: one member's consensus as an Agrona agent ({@link ConsensusAgent}, the
 * conductor) and its rules, each in a file of its own: elections with pre-vote and leader stickiness (in the agent),
 * {@link LogOrder} (which log is more up to date; frames a member lost but still owes),
 * {@link FollowerLog} (taking a leader's bytes, conflicts, joining a snapshot),
 * {@link LeaderReplication} (follower progress, streaming, the commit rule, check-quorum,
 * transfer), {@link SnapshotTransfer} (install snapshot), {@link LogClock}
 * (log time), {@link Membership} (who votes, who learns, the configuration epoch); the member's door
 * ({@link MemberProtocolAdapter}, which routes each inbound message to the one handler of its kind:
 * {@link PeerMessageHandler} for what members say to each other, {@link ToolRequestHandler} for the tool's requests),
 * the standbys' {@link StandbyRelay}, the member protocol's publisher, and {@link AdminRequests}.
 * <p>
 * Owns: term, vote, role, commit position, the term index, peers' progress.
 * <p>
 * Never: does I/O of its own, starts a thread, sleeps, reads a clock it was not handed, or uses unseeded randomness.
 * The log, election state, snapshots, transport, clocks and randomness are interfaces handed in
 * ({@link RaftLog}, {@link ElectionStateStore},
 * {@link SnapshotStorage}), so a whole cluster runs in one thread from a seed, and any failure
 * replays exactly. Files live in {@code storage}, processes in {@code node}.
 */
package io.lockstep.consensus;
