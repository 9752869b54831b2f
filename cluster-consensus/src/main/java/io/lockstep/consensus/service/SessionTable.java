package io.lockstep.consensus.service;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.TreeMap;

/**
 * The replicated table of client sessions: built only by applying log entries, so every member holds the same
 * table at the same position. It is what makes ingress exactly-once: each session's messages carry consecutive
 * sequence numbers, a sequence already applied is a duplicate (a client's retry after a failover) and is
 * acknowledged without being applied, and one beyond the next expected is out of order (ingress lost before it
 * reached the log; the client resends everything not acknowledged). Session ids are assigned in log order.
 */
public final class SessionTable
{
    /** What to do with a session message. */
    public enum Disposition
    {
        /** The next sequence: apply it. */
        APPLY,
        /** Already applied: acknowledge, do not apply. */
        DUPLICATE,
        /** Beyond the next sequence: drop; the client will resend the missing ones first. */
        OUT_OF_ORDER,
        /** No such open session. */
        UNKNOWN_SESSION
    }

    /** One open session's replicated state. */
    public static final class Session
    {
        private final long id;
        private final String principal;
        private final EgressBuffer egress;
        private final SessionSecret secret;
        private long appliedSequence = -1;

        Session(final long id, final String principal, final SessionSecret secret, final int egressCapacity)
        {
            this.id = id;
            this.principal = principal;
            this.secret = secret;
            this.egress = new EgressBuffer(egressCapacity);
        }

        /**
         * @return the session secret its open returned to the client, which a resume must present; or
         * {@link SessionSecret#NONE} for a session opened before sessions had secrets (it cannot be resumed).
         */
        public SessionSecret secret()
        {
            return secret;
        }

        public long id()
        {
            return id;
        }

        /**
         * @return who the client authenticated as when it opened the session (empty if the cluster accepts all).
         */
        public String principal()
        {
            return principal;
        }

        /**
         * @return the highest ingress sequence applied, or -1.
         */
        public long appliedSequence()
        {
            return appliedSequence;
        }

        public EgressBuffer egress()
        {
            return egress;
        }
    }

    private final int maxSessions;
    private final int egressCapacity;
    private final TreeMap<Long, Session> sessions = new TreeMap<>();
    /** The same sessions in id order, for walking them every duty cycle without an iterator (ids only grow). */
    private final ArrayList<Session> inOrder = new ArrayList<>();
    /** Open sessions per principal: what the leader checks an open against, without walking the table. */
    private final HashMap<String, int[]> openByPrincipal = new HashMap<>();
    private long nextSessionId = 1;

    /**
     * @param maxSessions    bound on open sessions; an open beyond it is refused.
     * @param egressCapacity bytes of egress kept per session for resending after a failover.
     */
    public SessionTable(final int maxSessions, final int egressCapacity)
    {
        this.maxSessions = maxSessions;
        this.egressCapacity = egressCapacity;
    }

    /**
     * Apply a session-open entry.
     *
     * @return the new session, or null if the table is full (the open is refused, and the id is still used up so
     * that every member stays in step).
     */
    public Session open(final String principal, final SessionSecret secret)
    {
        final long id = nextSessionId++;
        if (sessions.size() >= maxSessions)
        {
            return null;
        }
        final Session session = new Session(id, principal, secret, egressCapacity);
        sessions.put(id, session);
        inOrder.add(session);
        openByPrincipal.computeIfAbsent(principal, p -> new int[1])[0]++;
        return session;
    }

    /**
     * Apply a session-message entry's bookkeeping.
     */
    public Disposition onMessage(final long sessionId, final long sequence)
    {
        final Session session = sessions.get(sessionId);
        if (null == session)
        {
            return Disposition.UNKNOWN_SESSION;
        }
        if (sequence <= session.appliedSequence)
        {
            return Disposition.DUPLICATE;
        }
        if (sequence != session.appliedSequence + 1)
        {
            return Disposition.OUT_OF_ORDER;
        }
        session.appliedSequence = sequence;
        return Disposition.APPLY;
    }

    /**
     * Apply a session-close entry.
     *
     * @return the closed session, or null if it was not open.
     */
    public Session close(final long sessionId)
    {
        final Session session = sessions.remove(sessionId);
        if (null != session)
        {
            inOrder.remove(session);
            final int[] count = openByPrincipal.get(session.principal);
            if (0 == --count[0])
            {
                openByPrincipal.remove(session.principal);
            }
        }
        return session;
    }

    /**
     * @return the bound on open sessions.
     */
    public int maxSessions()
    {
        return maxSessions;
    }

    /**
     * @return how many sessions are open for this principal (kept as sessions open and close, not counted).
     */
    public int openFor(final String principal)
    {
        final int[] count = openByPrincipal.get(principal);
        return null == count ? 0 : count[0];
    }

    /**
     * @return open sessions.
     */
    public int size()
    {
        return inOrder.size();
    }

    /**
     * @param index in [0, {@link #size()}): sessions in id order.
     * @return the session.
     */
    public Session sessionAt(final int index)
    {
        return inOrder.get(index);
    }

    /**
     * @param sessionId a session id.
     * @return true if the id was opened (and closed) in the part of the log applied so far; false if it was never
     * seen, which on a new leader that has not caught up may just mean "not applied yet".
     */
    public boolean wasClosed(final long sessionId)
    {
        return sessionId < nextSessionId && !sessions.containsKey(sessionId);
    }

    /** Ids from here on are at least {@code floor} (deterministic: applied from a log entry). */
    void raiseNextSessionId(final long floor)
    {
        nextSessionId = Math.max(nextSessionId, floor);
    }

    long nextSessionId()
    {
        return nextSessionId;
    }

    int egressCapacity()
    {
        return egressCapacity;
    }

    /**
     * Start from a snapshot: the table must be empty.
     */
    void restoreNextSessionId(final long nextSessionId)
    {
        if (!sessions.isEmpty())
        {
            throw new IllegalStateException("restore into a table that holds sessions");
        }
        this.nextSessionId = nextSessionId;
    }

    /**
     * Add a session a snapshot recorded.
     */
    Session restore(final long sessionId, final long appliedSequence, final String principal,
        final SessionSecret secret)
    {
        if (sessionId >= nextSessionId || sessions.containsKey(sessionId) || sessions.size() >= maxSessions)
        {
            throw new IllegalStateException("snapshot session " + sessionId + " does not fit the table (next id " +
                nextSessionId + ", " + sessions.size() + " of " + maxSessions + " open)");
        }
        final Session session = new Session(sessionId, principal, secret, egressCapacity);
        session.appliedSequence = appliedSequence;
        sessions.put(sessionId, session);
        inOrder.add(session);
        openByPrincipal.computeIfAbsent(principal, p -> new int[1])[0]++;
        return session;
    }

    public Session get(final long sessionId)
    {
        return sessions.get(sessionId);
    }

    /**
     * @return open sessions in id order.
     */
    public Collection<Session> sessions()
    {
        return Collections.unmodifiableCollection(sessions.values());
    }

    /**
     * @return a hash of the table: equal on members that applied the same entries.
     */
    public long stateHash()
    {
        long h = 0xcbf29ce484222325L ^ nextSessionId;
        // Indexed (id order, as the map's), not iterated: hashed at every pause in applying, without allocating.
        for (int i = 0, size = inOrder.size(); i < size; i++)
        {
            final Session s = inOrder.get(i);
            h = (h ^ s.id) * 0x100000001b3L;
            h = (h ^ s.appliedSequence) * 0x100000001b3L;
            h = (h ^ s.egress.nextSequence()) * 0x100000001b3L;
            h = (h ^ s.principal.hashCode()) * 0x100000001b3L;
            h = (h ^ s.secret.high()) * 0x100000001b3L;
            h = (h ^ s.secret.low()) * 0x100000001b3L;
        }
        return h;
    }
}
