package io.lockstep.consensus;

/**
 * What the consensus agent asks of the service layer running on the same member: its progress for status, tool
 * snapshot requests, and a snapshot installed from the leader (after which the layer must start again from it).
 */
public interface ServiceHooks
{
    /**
     * @return log position the service has applied.
     */
    long appliedPosition();

    /**
     * @return hash of the replicated state at {@link #appliedPosition()}.
     */
    long stateHash();

    /**
     * A tool asked this leader for a snapshot; answer with {@link ConsensusAgent#answerTool} once it is durable.
     */
    void onSnapshotRequest(int endpoint, long correlationId);

    /**
     * A tool asked this leader to suspend (or resume) client ingress and timers; answer with
     * {@link ConsensusAgent#answerTool} once this member applied the entry.
     */
    void onSuspendRequest(int endpoint, long correlationId, boolean suspend);

    /**
     * A tool asked this leader for an orderly shutdown; answer with {@link ConsensusAgent#answerTool} once this
     * member's snapshot at the shutdown entry is durable.
     */
    void onShutdownRequest(int endpoint, long correlationId);

    /**
     * A snapshot to restart from (the leader's, or this member's own when its log was cut below the leader's; see
     * {@code SnapshotTransfer.receive}) is about to be installed, which may reset the log: whatever reads the log on
     * another thread must stop first (a DEDICATED member's service thread).
     */
    default void beforeSnapshotInstall()
    {
    }

    /**
     * That snapshot is installed and the log now starts at its position: state applied so far is
     * replaced by the snapshot's.
     */
    void onSnapshotInstalled(SnapshotStorage.Loaded snapshot);
}
