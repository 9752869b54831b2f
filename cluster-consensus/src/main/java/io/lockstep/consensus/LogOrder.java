package io.lockstep.consensus;

/**
 * Raft's order on logs (§5.4.1): the log whose last entry has the later term is more up to date; with equal last
 * terms, the longer one is. Votes are granted only to candidates at least as up to date as the voter.
 * <p>
 * A voter compares candidates against the greater of its log and its promise ({@link RaftLog#promisedPosition()}):
 * a member that lost frames it may have acknowledged must not vote as if it never had them, or a candidate lacking a
 * committed entry could win with its vote.
 */
final class LogOrder
{
    private LogOrder()
    {
    }

    /**
     * @return true if a log ending at (term, position) is at least as up to date as one ending at (otherTerm,
     * otherPosition).
     */
    static boolean atLeastAsUpToDate(final long term, final long position, final long otherTerm,
        final long otherPosition)
    {
        return term > otherTerm || (term == otherTerm && position >= otherPosition);
    }

    /**
     * @return true if a candidate's log is at least as up to date as this member's; a member that owes frames
     * compares with what it promised, as if it still held them.
     */
    static boolean candidateUpToDate(
        final RaftLog log, final long lastTerm, final long candidateLastTerm, final long candidateLastPosition)
    {
        final boolean owes = owesPromisedFrames(log, lastTerm);
        return atLeastAsUpToDate(candidateLastTerm, candidateLastPosition, owes ? log.promisedTerm() : lastTerm,
            owes ? log.promisedPosition() : log.pendingPosition());
    }

    static void warnIfOwing(final RaftLog log, final long lastTerm, final int memberId)
    {
        if (owesPromisedFrames(log, lastTerm))
        {
            System.getLogger(LogOrder.class.getName()).log(System.Logger.Level.WARNING, "member {0} lost frames it " +
                "may have acknowledged: log ends at {1}, promised {2}; it votes as if it held them and stands for " +
                "election only once a leader has sent them again", memberId, log.pendingPosition(),
                log.promisedPosition());
        }
    }

    /**
     * @return true if the member may stand for election: it owes no frames it may have acknowledged, and it can
     * write its log (a leader that cannot would commit nothing).
     */
    static boolean mayStand(final RaftLog log, final long lastTerm)
    {
        return !owesPromisedFrames(log, lastTerm) && null == log.writeProblem();
    }

    static void warnNotStanding(final RaftLog log, final long lastTerm, final int memberId)
    {
        if (null != log.writeProblem())
        {
            System.getLogger(LogOrder.class.getName()).log(System.Logger.Level.WARNING, "member {0} does not " +
                "stand for election: it cannot write its log ({1})", memberId, log.writeProblem());
            return;
        }
        System.getLogger(LogOrder.class.getName()).log(System.Logger.Level.WARNING, "member {0} does not stand for " +
            "election: its log ends at {1} (term {2}) but it promised up to {3} (term {4}) before frames were lost",
            memberId, log.pendingPosition(), lastTerm, log.promisedPosition(), log.promisedTerm());
    }

    /**
     * @return true if the log no longer covers its promise: the member owes frames it may have acknowledged, and
     * may not stand for election until it has them (or a log ahead of them) from a leader.
     */
    static boolean owesPromisedFrames(final RaftLog log, final long lastTerm)
    {
        return !atLeastAsUpToDate(lastTerm, log.pendingPosition(), log.promisedTerm(), log.promisedPosition());
    }
}
