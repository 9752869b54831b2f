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

    /**
     * @return this member's role now.
     */
    ClusterRole role();

    /**
     * @return log time: the timestamp of the entry being applied (the leader's clock when it appended it).
     */
    long time();

    /**
     * @return log position of the end of the entry being applied.
     */
    long logPosition();

    /**
     * Schedule a timer, or move it if the id is already scheduled. It fires as a log entry, at the same position on
     * every member, at or after the deadline in log time.
     *
     * @param correlationId chosen by the service.
     * @param deadline      log time at which it fires.
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
     * @return a position if accepted, or a negative {@link ClientSession} offer code under back pressure.
     */
    long offer(DirectBuffer buffer, int offset, int length);

    /**
     * @return the idle strategy to use when a service must wait (for example retrying an offer under back pressure).
     */
    IdleStrategy idleStrategy();
}
