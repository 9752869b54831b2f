package io.lockstep.cluster.transport;

/**
 * The log lines of one kind of dropped connection, at most {@link LineBudget#LINES_PER_SECOND} a second: a flood of
 * bad connections must not turn the member's thread into a log writer. Lines held back are counted in one line once
 * their second is over. The problem listener (counters, {@code tool errors}) still hears every drop; this bounds
 * only the text. Reads the transport's clock, never the wall's: the simulation stays deterministic.
 */
final class DroppedConnectionLog
{
    private static final System.Logger LOGGER = System.getLogger(TcpTransport.class.getName());

    private final String kind;
    private final int selfId;
    /** A client or tool retries every backoff interval and reports the last reason itself: its lines are debug. */
    private final System.Logger.Level level;
    private final LineBudget budget = new LineBudget();

    /**
     * @param kind   what this log counts, as the held-back line names it: {@code connection}, {@code identity} or
     *               {@code replaced member}.
     * @param selfId the member's id, or -1 for a client or tool.
     */
    DroppedConnectionLog(final String kind, final int selfId)
    {
        this.kind = kind;
        this.selfId = selfId;
        this.level = selfId >= 0 ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
    }

    /**
     * @return true if the line was written, false if this second's budget was spent and it was counted instead.
     */
    boolean log(final long nowNs, final Object peer, final String reason)
    {
        reportIfOver(nowNs);
        if (!budget.take(nowNs))
        {
            return false;
        }
        // Ids as plain digits (a client's endpoint is 1048576 and up), not grouped as numbers are by default.
        LOGGER.log(level, "member {0} dropped connection to {1}: {2}", Integer.toString(selfId),
            peer instanceof Number n ? Long.toString(n.longValue()) : peer, PrintableText.of(reason));
        return true;
    }

    /**
     * Say how many lines the last second held back, once it is over: called from every poll, so that the end of a
     * flood is reported too, not on the next drop hours later.
     */
    void reportIfOver(final long nowNs)
    {
        final long heldBack = budget.heldBackIfOver(nowNs);
        if (heldBack > 0)
        {
            LOGGER.log(level, "member {0}: {1} more dropped connections ({2}) were not logged in that second: see " +
                "lockstep_connections_refused_total and tool errors", selfId, heldBack, kind);
        }
    }

    long heldBack()
    {
        return budget.heldBack();
    }
}
