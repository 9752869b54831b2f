package io.lockstep.cluster;

import org.agrona.DirectBuffer;
import org.agrona.SemanticVersion;

/**
 * What a replicated service implements: a deterministic state machine driven by the committed log. Every member
 * runs the same service over the same log, so every member holds the same state at the same log position.
 * <p>
 * Rules a service must keep, because replicas must compute the same state: read time only from the timestamps
 * handed in (log time), never from a clock; use no unseeded randomness; touch no outside state (files, network,
 * other threads). Callbacks come on one thread, one at a time. A callback that throws stops the member: a replica
 * that skipped an entry could no longer be trusted to agree with the others.
 * <p>
 * Three methods are the service: {@link #onStart} (load state), {@link #onSessionMessage} (apply a message) and
 * {@link #onTakeSnapshot} (save state). The other callbacks have defaults that do nothing: override those the
 * service needs (a service that schedules timers overrides {@link #onTimerEvent}, one that offers service messages
 * {@link #onServiceMessage}). Callbacks added in later versions come with defaults too, so a service keeps compiling.
 */
public interface ClusteredService
{
    /**
     * The service starts: load the snapshot if there is one, then the log after it is replayed. No entry is being
     * applied yet: {@link Cluster#time()} is the log time of the snapshot, or 0 without one, so a timer scheduled here
     * for {@code time() + delay} would fire at once on a fresh cluster. Schedule the first timer from the first entry
     * the service applies (a session open, say) and each next one from the last deadline, kept in the service's
     * state, rather than from the firing's timestamp, which comes a little after the deadline and would drift.
     *
     * @param cluster  what the service can ask of the cluster; valid for the service's life.
     * @param snapshot the latest snapshot of this service, or null to start empty.
     */
    void onStart(Cluster cluster, SnapshotReader snapshot);

    /**
     * A client session opened (a log entry, so at the same position on every member).
     *
     * @param session   the new session.
     * @param timestamp log time of the entry.
     */
    default void onSessionOpen(final ClientSession session, final long timestamp)
    {
    }

    /**
     * A client session closed.
     *
     * @param session   the session, still readable during the call.
     * @param timestamp log time of the entry.
     * @param reason    why it closed.
     */
    default void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
    {
    }

    /**
     * A message from a client, applied exactly once even if the client sent it again after a failover.
     *
     * @param session   the sending session (egress offered to it goes back to that client); never null.
     * @param timestamp log time of the entry.
     * @param buffer    holding the message; valid only during the call.
     * @param offset    index of the message.
     * @param length    length of the message.
     */
    void onSessionMessage(ClientSession session, long timestamp, DirectBuffer buffer, int offset, int length);

    /**
     * A message the service itself offered into the log ({@link Cluster#offer}), applied once on every member, in
     * the order offered, whichever leader appended it. Its own callback, so that no service can mistake it for a
     * client's message. A default that ignores it, so that a service that never offers one need not say so (and a
     * service written before this callback existed still compiles); a service that offers must override it.
     *
     * @param timestamp log time of the entry.
     * @param buffer    holding the message; valid only during the call.
     * @param offset    index of the message.
     * @param length    length of the message.
     */
    default void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
    }

    /**
     * A timer the service scheduled has fired (a log entry the leader appended at the deadline).
     *
     * @param correlationId the id given to {@link Cluster#scheduleTimer}.
     * @param timestamp     log time of the entry.
     */
    default void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    /**
     * Write the service's whole state, so that a restart can load it instead of replaying the log before it.
     *
     * @param writer takes the state as a stream of fragments.
     */
    void onTakeSnapshot(SnapshotWriter writer);

    /**
     * This member's role changed. Informational: state must not depend on it (every replica computes the same
     * state whatever its role).
     *
     * @param newRole the role now.
     */
    default void onRoleChange(final ClusterRole newRole)
    {
    }

    /**
     * The service is being stopped (shutdown or a fatal error on this member).
     *
     * @param cluster as passed to {@link #onStart}.
     */
    default void onTerminate(final Cluster cluster)
    {
    }

    /**
     * A hash of the service's replicated state, for checking replicas against each other ({@code lockstep tool
     * status} prints it with the position it was taken at). Replicas at the same log position must return the same
     * value. The default, 0, opts out.
     *
     * @return the hash.
     */
    default long stateHash()
    {
        return 0;
    }

    /**
     * This service's version, as {@link org.agrona.SemanticVersion#compose(int, int, int)}. Each leader writes its
     * version into the entry that starts its term, and a member refuses to apply entries a different major version
     * wrote (it stops, naming both versions): same major means the service applies the other's entries to the same
     * state. Raise the major when that no longer holds (see docs/how-to/upgrades.md).
     *
     * @return the version; the default is 0.0.1.
     */
    default int appVersion()
    {
        return SemanticVersion.compose(0, 0, 1);
    }
}
