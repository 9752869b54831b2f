package io.lockstep.consensus;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.log.MembershipChangeDecoder;
import io.lockstep.consensus.log.MessageHeaderDecoder;
import org.agrona.DirectBuffer;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.PADDING_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * A follower taking log bytes from its leader (Raft §5.3): the consistency check on the position and term the
 * bytes follow, frames it already holds skipped, a conflicting suffix truncated (never below the commit position:
 * committed entries are never removed; the one cut below it is a damaged frame's, {@link #cutDamaged}, and those
 * entries come back identical from the leader), the rest appended exactly as the leader stored them, each frame
 * checked.
 * Keeps the term index and log time in step with what it appends, and decides whether the log joins a snapshot
 * the member starts from or is sent.
 */
final class FollowerLog
{
    /** Returned by {@link #accept} when the bytes do not follow this log, or are damaged. */
    static final long REJECTED = -1;
    /**
     * The leader, of a newer membership epoch, holds another history below this member's commit position: entries
     * the old configuration committed never reached the standby promoted in its place (an asynchronous standby zone).
     * The member keeps its log as it is and takes no further part.
     */
    static final long DIVERGED = -2;

    private static final System.Logger LOGGER = System.getLogger(FollowerLog.class.getName());
    /** The kind under which a refused append is recorded ({@code tool errors}). */
    static final String REFUSED_APPEND = "refused-append";

    private final int memberId;
    private long divergedAt = -1;
    private final Membership membership;
    private final MembershipChangeDecoder change =
        new MembershipChangeDecoder();
    private long framesReceived;
    private long bytesReceived;
    private final RaftLog log;
    private final TermIndex termIndex;
    private final LogClock logClock;
    private long truncatedAt = -1;
    private final PeerProblems problems;

    FollowerLog(
        final int memberId, final RaftLog log, final TermIndex termIndex, final LogClock logClock,
        final Membership membership, final PeerProblems problems)
    {
        this.problems = problems;
        this.membership = membership;
        this.memberId = memberId;
        this.log = log;
        this.termIndex = termIndex;
        this.logClock = logClock;
    }

    /**
     * @return the position after the frames, now held (pending a flush); or {@link #REJECTED}.
     */
    long accept(
        final long prevPosition,
        final long prevTerm,
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final long commitPosition,
        final int fromLeaderId,
        final long leaderTerm)
    {
        truncatedAt = -1;
        // Only a leader of a newer membership epoch can lack an entry this member saw committed: the old
        // configuration committed it and it never reached the standby promoted in its place.
        final boolean newerEpoch = Membership.isNewerEpoch(leaderTerm, termIndex.termAt(commitPosition));
        if (prevPosition > log.pendingPosition() || prevPosition < log.startPosition() ||
            termIndex.termAt(prevPosition) != prevTerm)
        {
            if (newerEpoch && prevPosition <= commitPosition)
            {
                // The newer epoch's leader holds another entry where this member's committed one ends, or one below
                // this member's log, which it can no longer compare: either way its applied state cannot be
                // confirmed as the promoted cluster's.
                divergedAt = prevPosition;
                return DIVERGED;
            }
            return REJECTED;
        }
        if (!termsInOrder(buffer, offset, offset + length, prevTerm, leaderTerm))
        {
            problems.report(REFUSED_APPEND, "refused log bytes from member " + fromLeaderId + ": a frame's term " +
                "falls below the one before it or rises above the leader's term " + leaderTerm);
            return REJECTED;
        }
        long position = prevPosition;
        int o = offset;
        final int end = offset + length;
        while (o < end)
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final long frameTerm = buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final int logBytes = padding ? frameLength : FrameDescriptor.alignedLength(frameLength);
            if (frameLength < HEADER_LENGTH || (!padding && frameLength > end - o))
            {
                return REJECTED; // not a frame: the checks in appendFrames would refuse it, but this loop first
            }
            if (position < log.pendingPosition())
            {
                if (termIndex.termStartingAt(position) == frameTerm)
                {
                    position += logBytes;
                    o += padding ? HEADER_LENGTH : logBytes;
                    continue;
                }
                if (newerEpoch && position < commitPosition)
                {
                    divergedAt = position;
                    return DIVERGED;
                }
                truncateConflict(position, commitPosition);
            }
            final boolean taken = append(buffer, o, end - o, position, fromLeaderId);
            if (truncatedAt >= 0 && log.pendingPosition() > truncatedAt)
            {
                // A leader of a newer term holds other entries from the cut on, now in this log (all of the block,
                // or its pieces before a refused frame): what it promised past the cut was never committed (leader
                // completeness). Only once they are in, so that a block that is not frames takes nothing off.
                log.lowerPromise(truncatedAt, termIndex.termAt(truncatedAt));
            }
            if (!taken)
            {
                // A full disk: what it holds matches, so it says so rather than refuse, and the leader, its bytes
                // in flight unacknowledged, stops sending more instead of sending the same again every round trip.
                return null != log.writeProblem() ? log.pendingPosition() : REJECTED;
            }
            return log.pendingPosition();
        }
        return position;
    }

    /**
     * A leader's log never holds a term above its own, and its terms never fall from one entry to the next (Raft's
     * election and log matching rules): a block that breaks either is not a leader's log, whoever sent it. Checked
     * before anything is cut or appended, because once such a frame is in the log the term index refuses it, now
     * and at every restart, and the member could not start again without a repair by hand.
     *
     * @return true if every frame's term, from {@code prevTerm} on, is at least the one before it and at most the
     * leader's; false also for bytes that are not whole frames.
     */
    private static boolean termsInOrder(
        final DirectBuffer buffer, final int offset, final int end, final long prevTerm, final long leaderTerm)
    {
        long previous = prevTerm;
        for (int o = offset; o < end; )
        {
            if (end - o < HEADER_LENGTH)
            {
                return false;
            }
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final long term = buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN);
            if (frameLength < HEADER_LENGTH || (!padding && frameLength > end - o) || term < previous ||
                term > leaderTerm)
            {
                return false;
            }
            previous = term;
            o += padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
        }
        return true;
    }

    /**
     * @return true if a leader of a newer membership epoch offers a snapshot at or below this member's commit that
     * this member cannot confirm it holds (see {@link #DIVERGED}).
     */
    boolean cannotConfirm(
        final long position, final long snapshotTerm, final long commitPosition, final long leaderTerm)
    {
        if (!Membership.isNewerEpoch(leaderTerm, termIndex.termAt(commitPosition)))
        {
            return false;
        }
        final boolean atStart = position == log.startPosition() && snapshotTerm == log.startTerm();
        return !atStart && !joins(position, snapshotTerm);
    }

    /** A membership change in a frame now in the log: from here on it is the configuration. */
    private void observeChange(final DirectBuffer buffer, final int frameOffset, final int frameType,
        final long position)
    {
        if (MembershipChangeDecoder.TEMPLATE_ID == frameType &&
            LogClock.isTimestamped(buffer, frameOffset, frameType))
        {
            final int headerOffset = frameOffset + HEADER_LENGTH;
            change.wrap(buffer, headerOffset + MessageHeaderDecoder.ENCODED_LENGTH,
                buffer.getShort(headerOffset, LITTLE_ENDIAN) & 0xFFFF,
                buffer.getShort(headerOffset + 6, LITTLE_ENDIAN) & 0xFFFF);
            membership.onLogChange(position, change.configEpoch(), change.configVersion(), change.voters(),
                change.learners());
        }
    }

    /** @return mean length of the frames received from leaders since start (-1 before any): bytes told in entries. */
    long meanFrameBytes()
    {
        return 0 == framesReceived ? -1 : bytesReceived / framesReceived;
    }

    /** @return where this log and a newer epoch's leader part below the commit position ({@link #DIVERGED}). */
    long divergedAt()
    {
        return divergedAt;
    }

    /**
     * @return where the last {@link #accept} truncated a conflicting suffix, or -1 if it did not.
     */
    long truncatedAt()
    {
        return truncatedAt;
    }

    private boolean append(
        final DirectBuffer buffer, final int offset, final int length, final long position, final int fromLeaderId)
    {
        if (null != log.writeProblem() && log.pendingPosition() > log.appendedPosition())
        {
            return false; // a full disk holds the last bytes unwritten: no more until they are (the leader resends)
        }
        final int end = offset + length;
        long p = position;
        for (int o = offset; o < end; )
        {
            final int taken = appendPiece(buffer, o, end - o, fromLeaderId);
            if (taken <= 0)
            {
                return false; // what the pieces before took is held and noted: the leader resends from there
            }
            p = noteFrames(buffer, o, o + taken, p);
            o += taken;
        }
        return true;
    }

    /**
     * Append as much of the frames as one batch holds: all of them, or after a flush as many whole frames as fit. A
     * block longer than this member's batch is then taken in pieces, so that a leader with a larger
     * {@code lockstep.log.max.batch} is followed all the same; only a single frame longer than the batch is refused.
     *
     * @return bytes of the buffer taken (whole frames); 0 if the disk is full, -1 if refused.
     */
    private int appendPiece(final DirectBuffer buffer, final int offset, final int length, final int fromLeaderId)
    {
        int pieceLength = length;
        try
        {
            while (true)
            {
                if (RaftLog.BACK_PRESSURED != log.appendFrames(buffer, offset, pieceLength))
                {
                    return pieceLength;
                }
                log.flush();
                if (null != log.writeProblem())
                {
                    return 0; // the disk is full: taken once it writes again (the leader resends)
                }
                if (RaftLog.BACK_PRESSURED != log.appendFrames(buffer, offset, pieceLength))
                {
                    return pieceLength;
                }
                final int shorter = wholeFramesWithin(buffer, offset, pieceLength, pieceLength / 2);
                if (shorter >= pieceLength)
                {
                    problems.report(REFUSED_APPEND, "refused a frame of " + pieceLength + " bytes from member " +
                        fromLeaderId + ": longer than this member's log batch (lockstep.log.max.batch); every " +
                        "member must use the same lockstep.log.max.batch");
                    return -1;
                }
                pieceLength = shorter;
            }
        }
        catch (final ArchiveException ex)
        {
            // The log checks every frame before it takes any: the frames before a bad one (damaged, or longer than
            // this member's batch) are taken in smaller pieces, and the bad one alone is refused.
            final int shorter = wholeFramesWithin(buffer, offset, pieceLength, pieceLength / 2);
            if (shorter < pieceLength)
            {
                return appendPiece(buffer, offset, shorter, fromLeaderId);
            }
            problems.report(REFUSED_APPEND, "refused log bytes from member " + fromLeaderId + ": " + ex.getMessage() +
                " (frames longer than this member's log batch are refused: lockstep.log.max.batch must be the same " +
                "on every member)");
            return -1;
        }
    }

    /**
     * @return the length of the longest run of whole frames from the offset within the bound, or of the first frame
     * alone if even that is longer (frames already checked by {@link #accept}).
     */
    private static int wholeFramesWithin(
        final DirectBuffer buffer, final int offset, final int length, final int bound)
    {
        int o = offset;
        while (o < offset + length)
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final int bytes = padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
            if (o > offset && o - offset + bytes > bound)
            {
                break;
            }
            o += bytes;
        }
        return o - offset;
    }

    /** The term index, counters, log time and membership learn of frames now held. @return position after them. */
    private long noteFrames(final DirectBuffer buffer, final int from, final int to, final long position)
    {
        long p = position;
        for (int o = from; o < to; )
        {
            final int frameLength = buffer.getInt(o, LITTLE_ENDIAN);
            final int frameType = buffer.getInt(o + TYPE_OFFSET, LITTLE_ENDIAN);
            final boolean padding = PADDING_FRAME_TYPE == frameType;
            termIndex.onFrame(buffer.getLong(o + TERM_OFFSET, LITTLE_ENDIAN), p);
            framesReceived += padding ? 0 : 1;
            bytesReceived += padding ? 0 : FrameDescriptor.alignedLength(frameLength);
            logClock.observeFrame(buffer, o, frameType);
            observeChange(buffer, o, frameType, p);
            p += padding ? frameLength : FrameDescriptor.alignedLength(frameLength);
            o += padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
        }
        return p;
    }

    private void truncateConflict(final long position, final long commitPosition)
    {
        // State-machine safety: committed entries are never removed. A leader that asks for it breaks Raft's rules
        // (or is a liar holding the member secret): stopping is loud, where a refusal would let it go on sending
        // from past the member's commit over a history that differs below it.
        if (position < commitPosition)
        {
            throw new IllegalStateException("member " + memberId + " asked to truncate committed entries: position " +
                position + " < commit " + commitPosition);
        }
        LOGGER.log(System.Logger.Level.INFO, "member {0} truncates conflicting log at {1}", memberId, position);
        cutAt(position);
    }

    /**
     * A reader found the frame at a position damaged: cut the log there, committed entries included, for the leader
     * to send again ({@link FrameRepair}). The promise is left as it was, so the member owes what it lost.
     *
     * @return where the log now ends.
     */
    long cutDamaged(final long position)
    {
        cutAt(position);
        return truncatedAt;
    }

    private void cutAt(final long position)
    {
        final long cut = Math.min(position, flushOrDropUnwritten());
        if (cut < log.appendedPosition())
        {
            log.truncate(cut);
        }
        termIndex.truncate(cut);
        membership.onTruncate(cut);
        truncatedAt = cut;
    }

    /**
     * Start from a loaded snapshot: it covers committed state up to its position. If the log ends below it, or holds
     * another entry ending there, the log is restarted at the snapshot (the leader sends the rest): nothing in it is
     * lost that was committed, because a committed entry at or before the snapshot is in it, and by log matching no
     * entry after a mismatch can be committed. A log that starts above the snapshot is another matter (the newest
     * snapshot was damaged and an older one is all there is): it may hold entries this member acknowledged, so the
     * member refuses to start rather than discard them.
     */
    void startFromSnapshot(final long position, final long snapshotTerm)
    {
        if (log.startPosition() > position)
        {
            // The log may hold entries this member acknowledged: discarding it could lose a committed entry.
            throw new IllegalStateException("member " + memberId + ": the log starts at " + log.startPosition() +
                ", above the newest usable snapshot at " + position + ", so the state between cannot be rebuilt " +
                "here; the log is kept, not discarded, because it may hold acknowledged entries. Restore a snapshot " +
                "at or above " + log.startPosition() + ", or move this member's data directory away so that it " +
                "rejoins empty and is sent the leader's snapshot");
        }
        if (!joins(position, snapshotTerm))
        {
            LOGGER.log(System.Logger.Level.WARNING, "member {0}: log [{1}, {2}) does not join the snapshot at {3} " +
                "(term {4}); the log restarts at the snapshot", memberId, log.startPosition(), log.pendingPosition(),
                position, snapshotTerm);
            restartAt(position, snapshotTerm);
        }
    }

    /**
     * Before the log is cut or restarted: write what is pending, or, when a full disk keeps it unwritten, drop it
     * (it was never acknowledged, and the cut replaces it anyway).
     *
     * @return where the log now ends (the start of the dropped frames, if any were).
     */
    private long flushOrDropUnwritten()
    {
        log.flush();
        if (log.pendingPosition() > log.appendedPosition())
        {
            log.discardUnwritten();
        }
        return log.pendingPosition();
    }

    /**
     * @return true if this log holds the entry ending at a snapshot's position, with the snapshot's term: the log
     * then joins the snapshot, and the entries after it are kept (they may be committed entries this member
     * acknowledged). Flushes first, so that every frame is visible.
     */
    boolean joins(final long position, final long snapshotTerm)
    {
        log.flush();
        return log.startPosition() <= position && position <= log.pendingPosition() &&
            termIndex.termAt(position) == snapshotTerm && isFrameBoundary(position);
    }

    /**
     * Raft's rule for an installed snapshot: if this log holds the snapshot's last entry (same position, same term),
     * the entries after it are kept - they may be committed entries this member acknowledged, and discarding them
     * could lose them. Otherwise the log is discarded: an entry that disagrees with committed state at the
     * snapshot's position, and by log matching every entry after it, was never committed.
     */
    void onSnapshotInstalled(final long position, final long snapshotTerm, final int fromLeaderId, final boolean own)
    {
        final boolean retain = joins(position, snapshotTerm);
        if (!retain)
        {
            restartAt(position, snapshotTerm);
        }
        System.getLogger(FollowerLog.class.getName()).log(System.Logger.Level.INFO,
            own ? "member {0} restarted at its own snapshot at {1} ({3})" :
                "member {0} installed snapshot at {1} from {2} ({3})", memberId, position, fromLeaderId,
            retain ? "log after it kept" : "log restarted at it");
    }

    /** @return true if this log reaches {@code position} (written or pending). */
    boolean holds(final long position)
    {
        return log.pendingPosition() >= position;
    }

    /**
     * Discard the log and start it again, empty, at a snapshot's position: only when it does not {@link #joins}
     * it, so an entry of it disagrees with committed state there and, by log matching, so does every entry after.
     */
    void restartAt(final long position, final long snapshotTerm)
    {
        flushOrDropUnwritten();
        membership.onTruncate(position);
        log.reset(position, snapshotTerm);
        rebuildTermIndex();
    }

    /**
     * Rebuild the term index (and log time) from the log as stored: on start and after a reset.
     */
    void rebuildTermIndex()
    {
        termIndex.clear();
        if (log.startPosition() > 0)
        {
            // The frame that ended at the log's start is purged; its term is kept with the log. Noted just before
            // the start, so that "the term at the start" is that term and the first stored frame still starts a term.
            termIndex.onFrame(log.startTerm(), log.startPosition() - 1);
        }
        log.scanAtOpen((position, frameTerm, frameType, buffer, frameOffset) ->
        {
            termIndex.onFrame(frameTerm, position);
            logClock.observeFrame(buffer, frameOffset, frameType);
            observeChange(buffer, frameOffset, frameType, position);
        });
    }

    private boolean isFrameBoundary(final long position)
    {
        if (position == log.startPosition() || position == log.pendingPosition())
        {
            return true;
        }
        final boolean[] found = new boolean[1];
        log.scan((p, frameTerm, frameType, buffer, frameOffset) -> found[0] |= p == position);
        return found[0];
    }
}
