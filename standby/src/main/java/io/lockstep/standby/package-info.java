/**
 * Warm standby: a non-voting member in another zone that keeps a persisted, replayed copy of the committed log
 * and can be promoted when the primary zone is lost. This module holds the standby's process ({@link StandbyNode}:
 * its launcher and its lag report).
 * <p>
 * Why the standby's rules are not here: a standby is a Raft learner, and what makes it safe is enforced by every
 * member's consensus, not by the standby. The leader replicates to it and tracks its lag
 * ({@code LeaderReplication}); every member keeps the configuration that says who votes and who learns, and the
 * epoch that fences off the old zone after a promotion ({@code Membership}); the relay standby passes the stream on
 * ({@code StandbyRelay}); the promotion is a tool command ({@code Promotion}) that every member must obey. A module
 * holding them would be one that the Raft core depends on, so they live in {@code cluster-consensus}, each in the
 * file of the rule it is part of.
 */
package io.lockstep.standby;
