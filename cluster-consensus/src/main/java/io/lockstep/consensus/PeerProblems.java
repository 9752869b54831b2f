package io.lockstep.consensus;

import io.lockstep.cluster.transport.LineBudget;
import io.lockstep.cluster.transport.PrintableText;
import org.agrona.concurrent.NanoClock;

/**
 * What a peer sent that this member dropped or refused: a message of a schema or version it does not read, an
 * append or snapshot chunk that cannot be what it says, frames that cannot be a leader's log. Each is recorded in
 * the member's errors ({@code tool errors} and the errors counter) and logged, at most
 * {@link LineBudget#LINES_PER_SECOND} lines a second. A member of another version during an upgrade, a member with a
 * bug, or a peer that holds the member secret and lies can send one with every heartbeat or faster: a line each
 * would make the member's thread a log writer and fill its disk with one line. Lines held back are counted in one
 * line once their second is over. Reads the member's monotonic clock (the simulation stays deterministic). Member
 * thread only.
 */
final class PeerProblems
{
    private static final System.Logger LOGGER = System.getLogger(PeerProblems.class.getName());

    private final int memberId;
    private final MemberErrors errors;
    private final NanoClock clock;
    private final LineBudget budget = new LineBudget();

    PeerProblems(final int memberId, final MemberErrors errors, final NanoClock clock)
    {
        this.memberId = memberId;
        this.errors = errors;
        this.clock = clock;
    }

    /**
     * @param kind    a short stable word, as {@link MemberErrors#record} takes it.
     * @param message what was dropped or refused and why, naming the peer.
     */
    void report(final String kind, final String message)
    {
        errors.record(kind, message);
        final long nowNs = clock.nanoTime();
        reportIfOver(nowNs);
        if (budget.take(nowNs))
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: {1}", Integer.toString(memberId),
                PrintableText.of(message));
        }
    }

    /** Say how many lines the last second held back, once it is over: from every duty cycle. */
    void reportIfOver(final long nowNs)
    {
        final long heldBack = budget.heldBackIfOver(nowNs);
        if (heldBack > 0)
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: {1} more messages from peers were dropped or " +
                "refused in that second without a line each: see tool errors", Integer.toString(memberId), heldBack);
        }
    }

    /** @return lines held back and not yet reported. */
    long heldBack()
    {
        return budget.heldBack();
    }
}
