package io.lockstep.cluster;

/**
 * A member's role in the cluster.
 */
public enum ClusterRole
{
    /** Replicates the leader's log. */
    FOLLOWER,
    /** Standing for election. */
    CANDIDATE,
    /** Sequences ingress into the log and sends egress. */
    LEADER
}
