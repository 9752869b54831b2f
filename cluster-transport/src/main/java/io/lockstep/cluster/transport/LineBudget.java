package io.lockstep.cluster.transport;

import java.util.concurrent.TimeUnit;

/**
 * At most {@link #LINES_PER_SECOND} log lines a second for one kind of line, the rest counted: what a peer can make a
 * member log must not turn the member's thread into a log writer, nor fill its disk with one line repeated. The
 * caller logs the count of lines held back once their second is over ({@link #heldBackIfOver}). Reads the caller's
 * clock, never the wall's, so that the simulation stays deterministic. One thread.
 */
public final class LineBudget
{
    public static final int LINES_PER_SECOND = 10;
    private static final long WINDOW_NS = TimeUnit.SECONDS.toNanos(1);

    private long windowStartNs = Long.MIN_VALUE / 2;
    private int linesInWindow;
    private long heldBack;

    /**
     * @return true if a line may be written now; false if this second's lines are spent (the line is counted).
     */
    public boolean take(final long nowNs)
    {
        if (nowNs - windowStartNs >= WINDOW_NS)
        {
            windowStartNs = nowNs;
            linesInWindow = 0;
        }
        if (++linesInWindow > LINES_PER_SECOND)
        {
            heldBack++;
            return false;
        }
        return true;
    }

    /**
     * Call before {@link #take} and from a regular poll, so that the end of a flood is reported too, not with the
     * next line hours later.
     *
     * @return the lines held back in a second that is now over (then forgotten), or 0.
     */
    public long heldBackIfOver(final long nowNs)
    {
        if (heldBack > 0 && nowNs - windowStartNs >= WINDOW_NS)
        {
            final long count = heldBack;
            heldBack = 0;
            return count;
        }
        return 0;
    }

    /** @return lines held back and not yet reported. */
    public long heldBack()
    {
        return heldBack;
    }
}
