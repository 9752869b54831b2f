package io.lockstep.cluster;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;

import java.util.function.Consumer;

/**
 * What a running service can ask of the cluster. Everything that changes replicated state goes through the log,
 * so calls that do (timers, closing a session, service messages) take effect when their log entry is applied.
 */
public interface Cluster
{
    /**
     * @return this member's id.
     */
    int memberId();

    /** Returned by {@link #offer} when the queue of service messages is full: try again after later entries. */
    long BACK_PRESSURED = -2;

    /**
     * @return this member's role now.
     */
    ClusterRole role();

    /**
     * Log time: the timestamp of the entry being applied, in <b>nanoseconds since the Unix epoch (UTC)</b>, taken
     * from the leader's wall clock when it appended the entry. It never goes back along the log, across leader
     * changes included: a leader never stamps an entry earlier than the last one it holds, and while its wall clock
     * is behind that (a backward NTP step, or a new leader whose clock lags the old one's) log time goes on at half
     * speed until the clock catches up. Every replica sees the same value at the same position. In
     * {@link ClusteredService#onStart}, before any entry is applied, it is the log time of the snapshot loaded, or 0
     * without one.
     *
     * @return log time of the entry being applied, epoch nanoseconds.
     */
    long time();

    /**
     * @return log position of the end of the entry being applied.
     */
    long logPosition();

    /**
     * Schedule a timer, or move it if the id is already scheduled. It fires once, as a log entry, at the same
     * position on every member, with a timestamp at or after the deadline. It fires on the leader's first duty cycle
     * whose log time has passed the deadline (plus the commit round trip); across a failover, the new leader fires it
     * once its own log time passes. While the leader's wall clock is behind log time, the remaining delay stretches
     * by at most a factor of two in real time.
     *
     * @param correlationId chosen by the service.
     * @param deadline      log time at which it fires, epoch nanoseconds (for example {@code time() + delayNs}).
     * @return true if scheduled; false if the bound on timers is reached.
     */
    boolean scheduleTimer(long correlationId, long deadline);

    /**
     * @param correlationId of a scheduled timer.
     * @return true if it was scheduled and is now cancelled.
     */
    boolean cancelTimer(long correlationId);

    /**
     * @param sessionId a session id.
     * @return the open session, or null.
     */
    ClientSession getClientSession(long sessionId);

    /**
     * Visit every open session, in session id order.
     *
     * @param action called for each.
     */
    void forEachClientSession(Consumer<ClientSession> action);

    /**
     * Close a session (through the log: {@link ClusteredService#onSessionClose} follows on every member).
     *
     * @param sessionId a session id.
     * @return true if the session was open.
     */
    boolean closeClientSession(long sessionId);

    /**
     * Put a message from the service into the log, to be applied by every member's service after the current
     * entry. Only the leader's offer is appended; followers compute the same offer and it is dropped.
     *
     * @return the message's id if accepted, or {@link #BACK_PRESSURED} when the replicated queue of service messages
     * is full (it is the same on every member, so every member gets the same answer).
     */
    long offer(DirectBuffer buffer, int offset, int length);

    /**
     * @return the idle strategy to use when a service must wait (for example retrying an offer under back pressure).
     */
    IdleStrategy idleStrategy();
}
