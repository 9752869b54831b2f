package io.lockstep.consensus;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.BlockHandler;
import org.agrona.DirectBuffer;

import java.util.function.LongUnaryOperator;

/**
 * The log as the consensus agent sees it: append, replicate, truncate, flush. Injected, so that the agent runs over
 * archive-log in a member ({@code ArchiveRaftLog} in the storage package, which depends on this one and never the
 * reverse) and over memory with crash semantics in the simulation. Frames have archive-log's layout ({@code
 * FrameDescriptor}) in both, so replicated blocks are the same bytes.
 * <p>
 * {@code pending >= appended >= durable}: pending includes frames not yet flushed; appended is written and readable
 * for replication; durable is what the member's durability policy guarantees and may be acknowledged.
 */
public interface RaftLog extends BlockSource
{
    /** Returned by appends when the batch is full: flush, then append again. */
    long BACK_PRESSURED = -2;

    /**
     * Receives every stored frame, padding included, during {@link #scan}.
     */
    @FunctionalInterface
    interface FrameVisitor
    {
        /**
         * @param position    where the frame starts in the log.
         * @param term        the frame's term.
         * @param frameType   the frame's type.
         * @param buffer      holding the frame (its header at frameOffset), valid only during the call.
         * @param frameOffset index of the frame header in the buffer.
         */
        void onFrame(long position, long term, int frameType, DirectBuffer buffer, int frameOffset);
    }

    long startPosition();

    /**
     * @return term of the frame that ends at {@link #startPosition()} (0 at the very start): what the consistency
     * check compares when a leader sends from there, and the last term of an empty log.
     */
    long startTerm();

    /**
     * Drop whole stored units below a position, once a durable snapshot covers them. The term at the new start is
     * made durable before anything is deleted.
     *
     * @param position nothing below it is needed any more (at most the commit position).
     * @param termAt   term of the frame ending at a position.
     * @return the new {@link #startPosition()}.
     */
    long purge(long position, LongUnaryOperator termAt);

    /**
     * Discard the whole log and start it again, empty, at a position: after a snapshot covering that position was
     * installed from the leader, and the old log no longer joins up with it.
     *
     * @param position where the log now starts (a snapshot's position).
     * @param term     term of the entry ending there.
     */
    void reset(long position, long term);

    long pendingPosition();

    /**
     * The end of the log, as (term, position), that this member may have acknowledged, kept apart from the data so
     * that it outlives damage to the data. Normally it is the durable end. It is ahead of the log (in Raft's order:
     * last term, then position) only when frames the member made durable were later found damaged or missing: the
     * member then owes them. Until its log is again at least as up to date as this, it must neither stand for
     * election (it lacks entries it may have helped commit) nor vote as if its log were shorter than this.
     *
     * @return the promised position.
     */
    long promisedPosition();

    /**
     * @return term of the frame that ended at {@link #promisedPosition()}.
     */
    long promisedTerm();

    long appendedPosition();

    long durablePosition();

    /**
     * @return position after the frame, or {@link #BACK_PRESSURED}.
     */
    long append(long term, int frameType, DirectBuffer buffer, int offset, int length);

    /**
     * Append frames exactly as another member's {@link #readBlock} produced them.
     *
     * @return position after them, or {@link #BACK_PRESSURED}.
     * @throws ArchiveException if a frame is damaged or misplaced.
     */
    long appendFrames(DirectBuffer buffer, int offset, int length);

    /**
     * Write what is pending and meet the durability policy.
     *
     * @return the durable position.
     */
    long flush();

    /**
     * @return null while the log writes, or why its last flush could not (no space left on its device): what is
     * pending is kept, and a later flush writes it once there is space.
     */
    String writeProblem();

    /**
     * Drop what is pending and not yet written: never durable, so never acknowledged.
     *
     * @return where the dropped frames started, or -1 if nothing was pending.
     */
    long discardUnwritten();

    /**
     * Remove every frame at or after a frame boundary. Nothing may be pending.
     */
    void truncate(long position);

    /**
     * Hand whole frames from a position, up to a limit and about maxBytes, as one block (this log's own reader: for
     * the thread that writes it).
     *
     * @return log bytes covered (0 if none available).
     */
    int readBlock(long position, long limitPosition, int maxBytes, BlockHandler handler);

    /**
     * @return a reader for another thread; this default, for logs used by one thread only (the simulation), reads
     * through {@link #readBlock}.
     */
    default BlockSource newBlockSource()
    {
        return new BlockSource()
        {
            public int readBlock(final long position, final long limitPosition, final int maxBytes,
                final BlockHandler handler)
            {
                return RaftLog.this.readBlock(position, limitPosition, maxBytes, handler);
            }

            public void close()
            {
            }
        };
    }

    /**
     * Bring the promise down, for one of two reasons that each prove nothing past it was committed: the log was cut
     * there for a conflict (a leader of a newer term holds another entry there), or every other voter said its log
     * and promise end below it ({@link OwedFrames}). Without it a member would owe, for good, entries no one can
     * send it. Only ever lowers: a position and term not behind the promise change nothing.
     *
     * @param position the new promise.
     * @param term     term of the entry ending there (where unknown, no lower than it).
     */
    void lowerPromise(long position, long term);

    /**
     * @return null, or how the promise was found when it should have held one (missing, untrusted), at this open or
     * an earlier one, until {@link #promiseKeptAgain()}: the member cannot vouch for what it may have acknowledged
     * before (see {@link OwedFrames}).
     */
    default String promiseLost()
    {
        return null;
    }

    /**
     * This member durably holds the committed log of a leader of a term later than its own at start, up to an entry
     * of that leader's term: every committed frame is in it, so what it acknowledged before its promise was lost no
     * longer matters, and {@link #promiseLost()} is null from now on, across restarts too.
     */
    default void promiseKeptAgain()
    {
    }

    /**
     * @return the lowest position at which a reader of this log (on any thread) found a damaged frame while the
     * member ran, or -1: readers stop before it, and the member fetches it again ({@code FrameRepair}).
     */
    default long damagedAt()
    {
        return -1;
    }

    /** @return what was wrong with the frame at {@link #damagedAt()}, or null. */
    default String damage()
    {
        return null;
    }

    /** The log no longer holds the damaged frame at a position (it was cut there): readers may go on. */
    default void damageRepaired(final long position)
    {
    }

    /**
     * Visit every frame from the start (on startup, to rebuild the term index).
     */
    void scan(FrameVisitor visitor);

    /**
     * The member's pass over its log at start: given at least the frames that start a term (padding included),
     * every membership change and the frame with the latest log time, in log order. The default gives every frame
     * ({@link #scan}); a log that noted those frames while recovery checked them as it opened gives only those, and
     * so is read once at start, not twice.
     */
    default void scanAtOpen(final FrameVisitor visitor)
    {
        scan(visitor);
    }

    void close();
}
