package io.lockstep.simulation;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.BlockHandler;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.RaftLog;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.util.Random;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.POSITION_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static io.lockstep.archive.FrameDescriptor.alignedLength;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * An in-memory log in archive-log's frame layout, with crash semantics: what a flush made durable survives; frames
 * still pending are lost, except that a crash may land in the middle of a flush and leave a prefix of them (the
 * torn last write, after recovery has cut any partial frame). Policy BATCH: flush makes everything durable, unless
 * the disk is slow ({@link #slowDisk(long, LongSupplier)}).
 * <p>
 * Disk damage: {@link #afterCrash(Random, boolean)} can also lose durable frames (a bit flip, a lost or misdirected
 * write found on restart): recovery cuts the log at the first bad frame, and, as archive-log does, the promise
 * (the durable end the member may have acknowledged) survives apart from the data.
 */
public final class SimLog implements RaftLog
{
    private final int maxBatchLength;
    private final ExpandableArrayBuffer data;
    private long pending;
    private long appended;
    private long durable;
    private long start;
    private long startTerm;
    private long pendingLastTerm;
    private long promisedPosition;
    private long promisedTerm;
    /** Frames lost to damage by crashes of this log's history (for the run's summary). */
    long damagedCuts;
    /** The disk is full: flushes write nothing until it is not. */
    private boolean diskFull;
    private String writeProblem;
    /**
     * A slow disk: each sync takes this long, and like archive-log's sync thread it covers what was written when it
     * began. 0: a flush is durable at once.
     */
    private long syncDelayNs;
    /** A frame damaged while running (-1: none), and where a reader found it (-1: not yet, or repaired). */
    private long damagedFrame = -1;
    private long damagedAt = -1;
    private LongSupplier clock;
    private long syncingPosition = -1;
    private long syncingTerm;
    private long syncDoneAtNs;
    /** Written, not yet in a sync under way: the next sync covers it. */
    private long unsyncedPosition = -1;
    private long unsyncedTerm;

    public SimLog(final int maxBatchLength)
    {
        this(maxBatchLength, new ExpandableArrayBuffer(64 * 1024), 0);
    }

    private SimLog(final int maxBatchLength, final ExpandableArrayBuffer data, final long end)
    {
        this.maxBatchLength = maxBatchLength;
        this.data = data;
        this.pending = end;
        this.appended = end;
        this.durable = end;
    }

    /**
     * @return the log as a restarted member finds it after a crash of this one.
     */
    SimLog afterCrash(final Random random)
    {
        return afterCrash(random, false);
    }

    /**
     * @param damage true to also lose durable frames: the log is cut at a frame where damage was found on restart,
     *               half the time among the last few KiB (recent entries, the ones not yet everywhere), half the time
     *               anywhere.
     * @return the log as a restarted member finds it after a crash of this one.
     */
    SimLog afterCrash(final Random random, final boolean damage)
    {
        return afterCrash(random, damage, Long.MAX_VALUE);
    }

    /**
     * @param damageAt a position at which recovery finds a damaged frame: the log is cut at the frame boundary at
     *                 or below it, whatever else the crash lost (Long.MAX_VALUE: no such damage).
     * @return the log as a restarted member finds it after a crash of this one.
     */
    SimLog afterCrash(final Random random, final boolean damage, final long damageAt)
    {
        advanceSync(false); // syncs done by the time of the crash hold; the one under way does not
        long end = durable;
        if (!diskFull && pending > durable && random.nextBoolean())
        {
            // Crash during the flush of the pending batch: a prefix of its frames reached the disk (a full disk
            // took none of them).
            end = frameBoundaryAtOrBelow(durable, durable + (long)(random.nextDouble() * (pending - durable)));
        }
        if (damage && durable > start)
        {
            final long from = random.nextBoolean() ? Math.max(start, durable - 4096) : start;
            end = frameBoundaryAtOrBelow(start, from + (long)(random.nextDouble() * (durable - from)));
        }
        if (damagedFrame >= 0 && damagedFrame < end)
        {
            end = damagedFrame; // recovery at the next open cuts at a damaged frame not yet repaired
        }
        if (damageAt < end)
        {
            end = frameBoundaryAtOrBelow(start, Math.max(start, damageAt));
        }
        end = Math.max(end, start);
        final ExpandableArrayBuffer copy = new ExpandableArrayBuffer((int)Math.max(end, 1024));
        copy.putBytes(0, data, 0, (int)end);
        final SimLog recovered = new SimLog(maxBatchLength, copy, end);
        // Purges and resets are durable when they return, and so is the promise (kept apart from the data).
        recovered.start = start;
        recovered.startTerm = startTerm;
        recovered.pendingLastTerm = recovered.termOfFrameEndingAt(end);
        recovered.promisedPosition = promisedPosition;
        recovered.promisedTerm = promisedTerm;
        recovered.damagedCuts = damagedCuts + (end < durable && (damage || damageAt < durable) ? 1 : 0);
        recovered.diskFull = diskFull;
        return recovered;
    }

    /**
     * @return the last frame boundary at or below a target, walking frames from a boundary.
     */
    private long frameBoundaryAtOrBelow(final long from, final long target)
    {
        long p = from;
        while (p < target)
        {
            final long next = p + alignedLength(data.getInt((int)p, LITTLE_ENDIAN));
            if (next > target)
            {
                break;
            }
            p = next;
        }
        return p;
    }

    private long termOfFrameEndingAt(final long end)
    {
        long term = startTerm;
        for (long p = start; p < end; p += alignedLength(data.getInt((int)p, LITTLE_ENDIAN)))
        {
            term = data.getLong((int)p + TERM_OFFSET, LITTLE_ENDIAN);
        }
        return term;
    }

    /**
     * @return true if this log lost frames it promised and has not got them back yet.
     */
    boolean owesPromisedFrames()
    {
        // A damaged frame not yet cut is one it will owe, and so are frames fetched again but not yet durable (a
        // slow disk): a crash now would lose them. Either way one impaired member of the fault budget.
        return holdsDamage() || promisedPosition > durablePosition() || promisedTerm > pendingLastTerm ||
            (promisedTerm == pendingLastTerm && promisedPosition > pending);
    }

    public long promisedPosition()
    {
        return promisedPosition;
    }

    public long promisedTerm()
    {
        return promisedTerm;
    }

    DirectBuffer buffer()
    {
        return data;
    }

    public long startPosition()
    {
        return start;
    }

    public long startTerm()
    {
        return startTerm;
    }

    /** Purges in units of {@link #PURGE_UNIT} bytes, as archive-log does in segments. */
    static final int PURGE_UNIT = 4096;

    public long purge(final long position, final LongUnaryOperator termAt)
    {
        long target = position - position % PURGE_UNIT;
        // Not past what is durable: archive-log forces a segment before the next holds data, so a log never starts
        // beyond what a crash keeps.
        target = Math.min(target, durablePosition());
        if (target <= start)
        {
            return start;
        }
        // Move to a frame boundary at or below the target: the log starts at a frame.
        final long p = frameBoundaryAtOrBelow(start, target);
        if (p <= start)
        {
            return start;
        }
        startTerm = termAt.applyAsLong(p);
        start = p;
        if (damagedFrame >= 0 && damagedFrame < p)
        {
            damagedFrame = -1; // purged with the log below a snapshot: nothing left to repair
            damagedAt = -1;
        }
        // What is purged is gone: poison it so a read below the start shows up as garbage in the checks.
        data.setMemory(0, (int)p, (byte)0x5A);
        return start;
    }

    public void reset(final long position, final long term)
    {
        advanceSync(true);
        if (pending != appended)
        {
            throw new IllegalStateException("flush before resetting");
        }
        data.checkLimit((int)position);
        data.setMemory(0, (int)Math.min(data.capacity(), Math.max(position, pending)), (byte)0x5A);
        start = position;
        startTerm = term;
        pendingLastTerm = term;
        pending = position;
        appended = position;
        durable = position;
        damagedFrame = -1;
        damagedAt = -1;
    }

    public long pendingPosition()
    {
        return pending;
    }

    public long appendedPosition()
    {
        return appended;
    }

    public long durablePosition()
    {
        advanceSync(false);
        return durable;
    }

    /**
     * A slow disk, or a healthy one again: while slow, a flush writes at once but its sync takes {@code delayNs} of
     * the clock given, one sync at a time, as on archive-log's sync thread.
     */
    public void slowDisk(final long delayNs, final LongSupplier clock)
    {
        advanceSync(true);
        this.syncDelayNs = delayNs;
        this.clock = clock;
    }

    /** @return true while the disk is slow. */
    public boolean slowDisk()
    {
        return syncDelayNs > 0;
    }

    /**
     * Finish the sync under way if it is due (or at once: the writer waits for it before it cuts the log, and a
     * healed disk finishes it), and start the next one.
     */
    private void advanceSync(final boolean now)
    {
        while (syncingPosition >= 0 && (now || clock.getAsLong() >= syncDoneAtNs))
        {
            durable = Math.max(durable, syncingPosition);
            promise(durable, syncingTerm);
            syncingPosition = -1;
            if (unsyncedPosition > durable)
            {
                syncingPosition = unsyncedPosition;
                syncingTerm = unsyncedTerm;
                syncDoneAtNs = (now ? clock.getAsLong() : syncDoneAtNs) + syncDelayNs;
                unsyncedPosition = -1;
            }
        }
    }

    private void promise(final long position, final long term)
    {
        if (term > promisedTerm || (term == promisedTerm && position > promisedPosition))
        {
            promisedPosition = position;
            promisedTerm = term;
        }
    }

    public long append(final long term, final int frameType, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final int frameLength = HEADER_LENGTH + length;
        final int aligned = alignedLength(frameLength);
        if (pending - appended + aligned > maxBatchLength)
        {
            return BACK_PRESSURED;
        }
        final int at = (int)pending;
        data.setMemory(at, aligned, (byte)0);
        data.putInt(at, frameLength, LITTLE_ENDIAN);
        data.putLong(at + TERM_OFFSET, term, LITTLE_ENDIAN);
        data.putLong(at + POSITION_OFFSET, pending, LITTLE_ENDIAN);
        data.putInt(at + TYPE_OFFSET, frameType, LITTLE_ENDIAN);
        data.putBytes(at + HEADER_LENGTH, buffer, offset, length);
        pending += aligned;
        pendingLastTerm = term;
        return pending;
    }

    public long appendFrames(final DirectBuffer buffer, final int offset, final int length)
    {
        long position = pending;
        for (int o = offset; o < offset + length; )
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            if (frameLength < HEADER_LENGTH || o + alignedLength(frameLength) > offset + length ||
                buffer.getLong(o + POSITION_OFFSET, LITTLE_ENDIAN) != position)
            {
                throw new ArchiveException(ArchiveException.Reason.CORRUPT_FRAME, null, position,
                    "bad replicated frame");
            }
            o += alignedLength(frameLength);
            position += alignedLength(frameLength);
        }
        if (pending - appended + length > maxBatchLength)
        {
            return BACK_PRESSURED;
        }
        data.putBytes((int)pending, buffer, offset, length);
        for (int o = offset; o < offset + length; o += alignedLength(buffer.getInt(o, LITTLE_ENDIAN)))
        {
            pendingLastTerm = buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN);
        }
        pending += length;
        return pending;
    }

    /** A full disk, or space again: while full, nothing pending is written (what was written stays). */
    public void diskFull(final boolean full)
    {
        this.diskFull = full;
    }

    /** @return true while the disk is full. */
    public boolean diskFull()
    {
        return diskFull;
    }

    public String writeProblem()
    {
        if (null != writeProblem && !diskFull && pending == appended)
        {
            writeProblem = null; // nothing waits to be written, and the disk has room again
        }
        return writeProblem;
    }

    public long discardUnwritten()
    {
        if (pending == appended)
        {
            return -1;
        }
        final long from = appended;
        pending = appended;
        pendingLastTerm = termOfFrameEndingAt(appended);
        return from;
    }

    public long flush()
    {
        if (diskFull && pending > appended)
        {
            writeProblem = "simulated full disk: " + (pending - appended) + " bytes wait";
            return durable;
        }
        writeProblem = null;
        appended = pending;
        if (syncDelayNs > 0 || syncingPosition >= 0)
        {
            advanceSync(false);
            if (appended > durable && syncingPosition < 0)
            {
                syncingPosition = appended;
                syncingTerm = pendingLastTerm;
                syncDoneAtNs = clock.getAsLong() + syncDelayNs;
            }
            else if (appended > Math.max(durable, syncingPosition))
            {
                unsyncedPosition = appended;
                unsyncedTerm = pendingLastTerm;
            }
            return durable;
        }
        durable = pending;
        promise(durable, pendingLastTerm);
        return durable;
    }

    public void truncate(final long position)
    {
        advanceSync(true);
        if (pending != appended)
        {
            throw new IllegalStateException("flush before truncating");
        }
        if (position > appended || position < start)
        {
            throw new IllegalArgumentException("truncate " + position + " beyond " + appended);
        }
        if (frameBoundaryAtOrBelow(start, position) != position)
        {
            throw new IllegalArgumentException("truncate " + position + ": no frame starts there"); // as archive-log
        }
        pending = position;
        appended = position;
        durable = Math.min(durable, position);
        if (damagedFrame >= position)
        {
            damagedFrame = -1; // the damaged bytes are gone with the cut
        }
        damageRepaired(position);
        pendingLastTerm = termOfFrameEndingAt(position);
    }

    public int readBlock(final long position, final long limitPosition, final int maxBytes, final BlockHandler handler)
    {
        if (position < start)
        {
            throw new ArchiveException(ArchiveException.Reason.PURGED, null, position, "log starts at " + start);
        }
        long bound = Math.min(limitPosition, appended);
        if (damagedFrame >= position && damagedFrame < bound)
        {
            // A reader stops before a damaged frame and says where (archive-log's LogReader.stopAtDamage).
            bound = damagedFrame;
            damagedAt = damagedAt < 0 ? damagedFrame : Math.min(damagedAt, damagedFrame);
        }
        long end = position;
        while (end < bound)
        {
            final long next = end + alignedLength(data.getInt((int)end, LITTLE_ENDIAN));
            if (next > bound || (end > position && next - position > maxBytes))
            {
                break;
            }
            end = next;
        }
        if (end == position)
        {
            return 0;
        }
        handler.onBlock(data, (int)position, (int)(end - position), position, end);
        return (int)(end - position);
    }

    /**
     * Damage a durable frame at random while the member runs (a bit flipped on disk, a lost write), found at once by
     * a reader: {@link #damagedAt()} says where, and reads stop before it until the log is cut there.
     *
     * @return where, or -1 if the log holds no durable frame.
     */
    public long damageFrame(final Random random)
    {
        if (durable <= start)
        {
            return -1;
        }
        return damageFrameAt(start + (long)(random.nextDouble() * (durable - start)));
    }

    /**
     * Damage the durable frame holding a position, as {@link #damageFrame(Random)} does at random.
     *
     * @return where the damaged frame starts, or -1 if no durable frame holds the position.
     */
    public long damageFrameAt(final long position)
    {
        if (position < start || position >= durable)
        {
            return -1;
        }
        damagedFrame = frameBoundaryAtOrBelow(start, position);
        damagedAt = damagedFrame;
        return damagedFrame;
    }

    /** @return true while a damaged frame is held (not yet cut). */
    public boolean holdsDamage()
    {
        return damagedFrame >= 0;
    }

    public void lowerPromise(final long position, final long term)
    {
        advanceSync(true);
        if (promisedTerm > term || (promisedTerm == term && promisedPosition > position))
        {
            promisedPosition = position;
            promisedTerm = term;
        }
    }

    public long damagedAt()
    {
        return damagedAt;
    }

    public String damage()
    {
        return damagedAt < 0 ? null : "simulated damaged frame at " + damagedAt;
    }

    public void damageRepaired(final long position)
    {
        if (damagedAt >= position)
        {
            damagedAt = -1;
        }
    }

    public void scan(final FrameVisitor visitor)
    {
        long p = start;
        while (p < appended)
        {
            final int frameLength = data.getInt((int)p, LITTLE_ENDIAN);
            visitor.onFrame(p, data.getLong((int)p + TERM_OFFSET, LITTLE_ENDIAN),
                data.getInt((int)p + TYPE_OFFSET, LITTLE_ENDIAN), data, (int)p);
            p += FrameDescriptor.alignedLength(frameLength);
        }
    }

    public void close()
    {
    }
}
