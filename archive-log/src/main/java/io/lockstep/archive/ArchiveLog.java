package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import static io.lockstep.archive.ArchiveException.Reason.PURGED;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.segmentBase;

/**
 * A segmented, append-only log addressed by byte position: the persisted Raft log of one member.
 * <p>
 * <b>Writing</b> (one thread): {@link #append} (or {@link #appendFrames} for bytes replicated from a leader) adds
 * frames to a preallocated batch buffer without allocating; {@link #flush} writes the whole batch with one write per
 * segment touched. Under {@link DurabilityPolicy#BATCH} one {@code fdatasync} on the log's sync thread
 * ({@link LogSync}) then makes everything written so far durable: group commit, with the writer free meanwhile. A
 * frame never crosses a segment end: the rest of the segment is filled with a padding frame.
 * <p>
 * <b>Reading</b> (any thread): {@link #newReader} gives a {@link LogReader} that sees frames only up to
 * {@link #publishedPosition()}, which is set with release semantics after the bytes are written.
 * <p>
 * <b>Positions</b>: {@code pending >= appended >= durable}; {@code published == appended}. The durable position is
 * what the configured policy guarantees: written to the OS under {@code NONE}, on disk under {@code BATCH}.
 * <p>
 * <b>Promise</b>: after each flush the log records, apart from the data ({@link PromiseFile}), the position it may
 * now be acknowledged up to and the term there. It only rises. On open it separates a torn last write (above the
 * promise: never acknowledged, cut) from damage to durable frames (below it: cut from the first bad frame too, since
 * nothing past a gap can be served, but the promise stays, the bytes are set aside, and
 * {@link RecoveryReport#lostPromisedFrames()} says so, so the member fetches them again before it votes or stands
 * as if it held them).
 * <p>
 * <b>Failure</b>: an I/O error while writing leaves the on-disk tail unknown, so the log refuses further use; reopen
 * it to recover.
 */
public final class ArchiveLog implements AutoCloseable
{
    /** Term of an empty log. */
    public static final long NULL_TERM = -1;
    /** Returned by append when the batch buffer is full: flush, then append again. */
    public static final long BACK_PRESSURED = -2;

    private static final System.Logger LOGGER = System.getLogger(ArchiveLog.class.getName());

    private final Path directory;
    private final int segmentLength;
    private final int maxBatchLength;
    private final long initialPosition;
    private final DurabilityPolicy durability;
    private final RecoveryReport recoveryReport;
    private final FrameBatch batch;
    private final AtomicLong publishedPosition = new AtomicLong();
    private volatile long startPosition;
    /** Truncations that deleted segment files; readers drop their mappings when it changes (see LogReader). */
    private volatile int segmentDeletions;

    private long appendedPosition;
    /** Under NONE; under BATCH the sync thread's ({@link LogSync}) is the durable position. */
    private long durablePosition;
    private final BackgroundSync backgroundSync;
    private final LogSync logSync;
    private final SegmentChannel segment;
    private final PromiseFile promise;
    private boolean failed;
    /** Why the last flush could not write (a full disk), if it could not: the batch is kept and written later. */
    private final WriteProblem writeProblem;
    private boolean closed;
    /** Null, or how the promise file was found at open when it should have held a promise: missing, untrusted. */
    private String promiseLost;

    private ArchiveLog(
        final ArchiveLogConfig config,
        final LogDescriptorFile.Values values,
        final RecoveryReport report,
        final PromiseFile promise)
    {
        this.promise = promise;
        directory = config.directory();
        segmentLength = values.segmentLength();
        maxBatchLength = values.maxBatchLength();
        initialPosition = values.initialPosition();
        durability = config.durability();
        recoveryReport = report;
        batch = new FrameBatch(segmentLength, maxBatchLength, report.endPosition(), report.lastTerm());

        startPosition = report.startPosition();
        appendedPosition = report.endPosition();
        durablePosition = report.endPosition();
        writeProblem = new WriteProblem(directory, 2L * maxBatchLength);
        publishedPosition.set(report.endPosition());
        backgroundSync = DurabilityPolicy.NONE == durability && config.backgroundSyncIntervalMs() > 0 ?
            new BackgroundSync(directory.getFileName().toString(), config.backgroundSyncIntervalMs() * 1_000_000L)
                : null;
        segment = new SegmentChannel(directory, segmentLength, DurabilityPolicy.BATCH == durability, backgroundSync);
        logSync = DurabilityPolicy.BATCH == durability ?
            new LogSync(String.valueOf(directory.getFileName()), report.endPosition(), promise, config.slowSyncFile())
            : null;
    }

    /**
     * Open a log directory, creating it if it holds no log, and recover its tail: the last whole frame is found and
     * a torn tail (what a crash during the last write leaves) is cut and reported in {@link #recoveryReport()}.
     *
     * @param config settings of the directory.
     * @return the open log.
     * @throws ArchiveException naming the file and position if the log is damaged beyond a torn tail, or was written
     *                          by a newer format version, or does not match the configuration.
     */
    public static ArchiveLog open(final ArchiveLogConfig config)
    {
        config.validate();
        try
        {
            Files.createDirectories(config.directory());
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(config.directory(), "cannot create log directory", ex);
        }
        SegmentFiles.deleteLeftoverPurges(config.directory());

        final LogDescriptorFile.Values values = LogDescriptorFile.openOrCreate(config, true);
        MappingWarmUp.run(config.directory().resolve(LogFormat.DESCRIPTOR_FILE));
        final Path promiseFile = config.directory().resolve(LogFormat.PROMISE_FILE);
        final String promiseStatus = PromiseFile.status(promiseFile);
        final PromiseFile promise = PromiseFile.open(promiseFile);
        try
        {
            final RecoveryReport report = LogRecovery.recover(config, values, promise, promiseStatus);
            final String lost = PromiseLoss.read(config.directory()); // before the sync thread starts
            final ArchiveLog log = new ArchiveLog(config, values, report, promise);
            log.promiseLost = lost;
            return log;
        }
        catch (final RuntimeException ex)
        {
            promise.close();
            throw ex;
        }
    }

    /**
     * Add a frame to the current batch. Nothing is written until {@link #flush()}.
     *
     * @param term      Raft term of the frame.
     * @param frameType type of the payload (non-negative; negative types are reserved).
     * @param buffer    holding the payload.
     * @param offset    index of the payload in the buffer.
     * @param length    length of the payload, at most {@link #maxPayloadLength()}.
     * @return the position after the frame, or {@link #BACK_PRESSURED} if the batch is full.
     */
    public long append(final long term, final int frameType, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final int payloadOffset = tryClaim(term, frameType, length);
        if (payloadOffset < 0)
        {
            return BACK_PRESSURED;
        }
        batch.buffer().putBytes(payloadOffset, buffer, offset, length);
        return batch.pendingPosition();
    }

    /**
     * Reserve a frame in the current batch so its payload can be encoded in place (for example by an SBE encoder
     * wrapped over {@link #claimBuffer()}), with no copy. The caller writes exactly {@code length} bytes at the
     * returned index before the next call on this log; the checksum is computed at {@link #flush()}.
     *
     * @param term      Raft term of the frame.
     * @param frameType type of the payload (non-negative; negative types are reserved).
     * @param length    length of the payload, at most {@link #maxPayloadLength()}.
     * @return index in {@link #claimBuffer()} where the payload goes, or {@code (int)BACK_PRESSURED} if the batch is
     * full; {@link #pendingPosition()} is then the position after the frame.
     */
    public int tryClaim(final long term, final int frameType, final int length)
    {
        checkUsable();
        final int payloadOffset = batch.tryClaim(term, frameType, length);
        return FrameBatch.FULL == payloadOffset ? (int)BACK_PRESSURED : payloadOffset;
    }

    /**
     * @return the batch buffer that {@link #tryClaim} indexes into; valid until the next flush.
     */
    public MutableDirectBuffer claimBuffer()
    {
        return batch.buffer();
    }

    /**
     * Add whole frames exactly as another member's log holds them (a follower appending what its leader replicated).
     * Every frame is checked first (length, checksum, and that it belongs at the position it will take); all are
     * taken or none.
     *
     * @param buffer holding the frames, as produced by {@link LogReader#readBlock}.
     * @param offset index of the first frame.
     * @param length bytes of frames.
     * @return the position after the frames, or {@link #BACK_PRESSURED} if the batch cannot take them all.
     * @throws ArchiveException with reason {@code CORRUPT_FRAME} if any frame is invalid or misplaced.
     */
    public long appendFrames(final DirectBuffer buffer, final int offset, final int length)
    {
        checkUsable();
        final long position = batch.appendFrames(buffer, offset, length);
        return FrameBatch.FULL == position ? BACK_PRESSURED : position;
    }

    /**
     * Write the current batch: one write per segment it touches. Readers see the frames once this returns. Under
     * {@code BATCH} the {@code fdatasync} that makes them durable runs on the log's sync thread ({@link LogSync}):
     * the durable position rises when it is done, and {@link #onDurable} says when.
     *
     * @return the durable position under the configured policy.
     */
    public long flush()
    {
        checkUsable();
        final int batchLength = batch.length();
        if (0 == batchLength || writeProblem.waiting())
        {
            return durablePosition();
        }

        batch.computeChecksums();
        final long batchStartPosition = batch.startPosition();
        final int splitOffset = batch.splitOffset();
        final long baseA = segmentBase(batchStartPosition, segmentLength);
        final int endA = splitOffset < 0 ? batchLength : splitOffset;
        boolean forcing = false;
        try
        {
            useSegment(baseA);
            segment.write(batch.bytes(0, endA), batchStartPosition - baseA);
            if (splitOffset >= 0 && splitOffset < batchLength)
            {
                if (DurabilityPolicy.BATCH == durability)
                {
                    // The padding that ends this segment is durable before the next segment holds data, so
                    // recovery never finds data after an incomplete segment.
                    forcing = true;
                    segment.force();
                    forcing = false;
                }
                useSegment(baseA + segmentLength);
                segment.write(batch.bytes(splitOffset, batchLength), 0);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (!forcing && NoSpace.is(ex))
            {
                // The kernel took none of it as written, or part: positional writes of the same bytes again later
                // are harmless. Not so a failed fsync, which may have dropped dirty pages: that one stays fatal.
                writeProblem.onNoSpace(batchStartPosition, batchLength, SegmentFiles.segmentFile(directory, baseA));
                return durablePosition();
            }
            failed = true;
            throw ex instanceof ArchiveException ? (ArchiveException)ex :
                new ArchiveException(ArchiveException.Reason.IO_ERROR, SegmentFiles.segmentFile(directory, baseA),
                    batchStartPosition, "write failed; the log must be reopened: " + ex, ex);
        }

        writeProblem.onWritten(batch.pendingPosition());
        final long pendingPosition = batch.pendingPosition();
        appendedPosition = pendingPosition;
        publishedPosition.setRelease(pendingPosition);
        if (null == logSync)
        {
            durablePosition = pendingPosition;
            raisePromise();
        }
        else
        {
            logSync.request(pendingPosition, batch.lastTerm());
        }
        batch.written();
        return durablePosition();
    }

    /**
     * @return null while the log writes, or why the last flush could not (no space left on its device): the frames
     * are held and written by a later flush, tried at most every 50 ms, once there is space. With nothing left to
     * write (the frames were dropped), it stays until the device has room for a full batch again, looked at at most
     * every 50 ms: a member does not count itself able to write before it can.
     */
    public String writeProblem()
    {
        return writeProblem.describe(0 == batch.length());
    }

    /**
     * Drop the frames appended but not yet written. They were never durable, so never acknowledged: a member that
     * cannot write gives them up when it stops leading, or when a leader sends it the log again.
     *
     * @return where the dropped frames started, or -1 if there were none.
     */
    public long discardUnwritten()
    {
        checkUsable();
        if (0 == batch.length())
        {
            return -1;
        }
        final long from = batch.startPosition();
        final int length = batch.length();
        batch.discard();
        if (writeProblem.present())
        {
            useSegment(segmentBase(from, segmentLength));
            segmentDeletions += SegmentFiles.zeroAfterFailedWrite(segment, directory, from, length, segmentLength);
        }
        return from;
    }

    /**
     * Under {@code NONE}, promise what is now written: a store into a mapped page, which survives the process as the
     * data does. Under {@code BATCH} the sync thread forces the promise after the data it covers.
     */
    private void raisePromise()
    {
        if (LogRecovery.isAhead(batch.lastTerm(), durablePosition, promise.term(), promise.position()))
        {
            promise.record(durablePosition, batch.lastTerm(), false);
        }
    }

    /**
     * @param listener run, on the log's sync thread, each time the durable position rises under {@code BATCH} (to
     *                 wake the writer's thread if it idles); never run under {@code NONE}, where {@link #flush}
     *                 returns the new durable position itself.
     */
    public void onDurable(final Runnable listener)
    {
        if (null != logSync)
        {
            logSync.onDurable(listener);
        }
    }

    /** @return how long the last sync of a batch took under {@code BATCH}, in ns; -1 before the first, or NONE. */
    public long lastSyncNs()
    {
        return null == logSync ? -1 : logSync.lastSyncNs();
    }

    /**
     * @return the highest position this log may have been acknowledged up to, by this process or an earlier one.
     * Above {@link #durablePosition()} only when frames it once held were lost (see
     * {@link RecoveryReport#lostPromisedFrames()}), until the log holds them, or a log ahead of them, again.
     */
    public long promisedPosition()
    {
        return promise.position();
    }

    /** @return the term of the frame that ended at {@link #promisedPosition()}. */
    public long promisedTerm()
    {
        return promise.term();
    }

    /**
     * Bring the promise down to a position the caller proved nothing past was committed (a cut for a conflict with a
     * newer term's leader, or the other members' answers): what the log promised past it is owed to no one.
     */
    public void lowerPromise(final long position, final long term)
    {
        checkUsable();
        awaitSync();
        if (LogRecovery.isAhead(promise.term(), promise.position(), term, position))
        {
            promise.record(position, term, DurabilityPolicy.BATCH == durability);
            if (DurabilityPolicy.BATCH == durability)
            {
                promise.force();
            }
        }
    }

    /**
     * Make everything written durable on disk, whatever the policy (for example before a snapshot or on close).
     * Earlier segments were forced when the writer left them (under {@code NONE} on the background thread, waited
     * for here), so forcing the current one is enough.
     *
     * @return the durable position.
     */
    public long sync()
    {
        flush();
        awaitSync();
        forceChannel();
        if (null != backgroundSync)
        {
            backgroundSync.awaitRetired(); // segments left behind are forced on the background thread
        }
        return durablePosition();
    }

    /**
     * Remove every frame at or after a position (Raft: a follower's conflicting suffix, or a damaged frame). Readers
     * past it read nothing more until the log grows back (they are bounded by the published position), but one in
     * the middle of a block there may see it zeroed: cut below where readers are only for frames that come back.
     *
     * @param position start of a frame, between {@link #startPosition()} and {@link #appendedPosition()}.
     * @throws IllegalStateException if frames are pending: flush first.
     * @throws ArchiveException      with reason {@code NOT_FRAME_BOUNDARY} if no frame starts at the position.
     */
    public void truncate(final long position)
    {
        checkUsable();
        if (batch.length() > 0)
        {
            throw new IllegalStateException("flush before truncating: " + batch.length() + " bytes pending");
        }
        if (position < startPosition || position > appendedPosition)
        {
            throw new IllegalArgumentException("truncate position " + position + " not in [" + startPosition + ", " +
                appendedPosition + "]");
        }
        if (position == appendedPosition)
        {
            return;
        }
        cutAt(position);
    }

    /** Zero the log's files from a frame boundary on, deleting whole segments beyond it: the log ends there. */
    private void cutAt(final long position)
    {
        awaitSync();
        batch.validator().checkFrameBoundary(directory, segmentLength, Math.max(initialPosition, startPosition),
            position);

        final long base = segmentBase(position, segmentLength);
        final long[] bases = SegmentFiles.listBasePositions(directory);
        final boolean deleted = bases.length > 0 && bases[bases.length - 1] > base;
        if (deleted)
        {
            segmentDeletions++; // before the files go: a reader that sees it has no mapping of them to trust
            if (segment.basePosition() > base)
            {
                segment.close();
            }
            SegmentFiles.deleteAbove(directory, bases, base);
        }

        final int fromOffset = (int)(position - base);
        final int lastNonZero;
        try (MappedSegment segment = MappedSegment.mapOrNull(directory, base, segmentLength))
        {
            lastNonZero = segment.lastNonZeroOffset(fromOffset);
        }
        useSegment(base);
        if (lastNonZero >= 0)
        {
            segment.zero(fromOffset, lastNonZero + 1L);
        }
        if (DurabilityPolicy.BATCH == durability)
        {
            forceChannel();
            if (deleted)
            {
                SegmentFiles.fsyncDirectory(directory);
            }
        }

        publishedPosition.setRelease(position);
        appendedPosition = position;
        durablePosition = position;
        if (null != logSync)
        {
            logSync.restartAt(position);
        }
        batch.restartAt(position);
        LOGGER.log(System.Logger.Level.INFO, "truncated log {0} to position {1}", directory, position);
    }

    /**
     * Delete whole segments below a position (a snapshot covers them), never the one appended to: {@link #advanceStart}
     * then {@link #deleteSegmentsBelowStart}.
     *
     * @return the new {@link #startPosition()}.
     */
    public long purge(final long position)
    {
        final long start = advanceStart(position);
        deleteSegmentsBelowStart();
        return start;
    }

    /**
     * Move the log's start up to the last segment boundary at or below a position, never into the segment being
     * appended to, without deleting anything: readers are refused below it from now on. Costs no I/O, so the
     * writer's thread can call it and leave the deleting to another ({@link #deleteSegmentsBelowStart}).
     *
     * @param position frames below this are no longer needed.
     * @return the new {@link #startPosition()}.
     */
    public long advanceStart(final long position)
    {
        checkUsable();
        if (appendedPosition <= 0)
        {
            return startPosition;
        }
        final long boundary = Math.min(position / segmentLength,
            (appendedPosition - 1) / segmentLength) * segmentLength;
        if (boundary > startPosition)
        {
            startPosition = boundary;
        }
        return startPosition;
    }

    /** Delete the segment files wholly below {@link #startPosition()}: safe from any thread (see the next). */
    public int deleteSegmentsBelowStart()
    {
        return deleteSegmentsBelow(Long.MAX_VALUE);
    }

    /**
     * Delete the segment files wholly below a position, or below {@link #startPosition()} if lower: for a deleting
     * thread that recorded the start ({@code log.base}) only up to that position (past it, a crash would leave a log
     * that starts where nothing says which term it starts in). Safe from any thread.
     *
     * @return segments deleted.
     */
    public int deleteSegmentsBelow(final long position)
    {
        return deleteSegmentsBelow(position, 0);
    }

    /**
     * As {@link #deleteSegmentsBelow(long)}, each segment a step at a time with a pause after each step, so that a
     * deleting thread never holds a CPU for long (see {@code SegmentFiles.deleteGradually}); a segment in the middle
     * of it is out of the log already, and one left half done by a crash is removed at the next open.
     *
     * @param pauseNs pause after each 1 MiB cut from a segment; 0 to delete each in one call.
     * @return segments deleted.
     */
    public int deleteSegmentsBelow(final long position, final long pauseNs)
    {
        final long start = Math.min(position, startPosition);
        final int deleted = SegmentFiles.deleteBelow(directory, segmentLength, start, pauseNs,
            DurabilityPolicy.BATCH == durability);
        if (deleted > 0)
        {
            LOGGER.log(System.Logger.Level.INFO, "purged {0} segments of {1}; log now starts at {2}",
                deleted, directory, start);
        }
        return deleted;
    }

    /**
     * @param position start of a frame at or after {@link #startPosition()} and at most {@link #publishedPosition()}.
     * @return a reader positioned there, for use by one thread.
     */
    public LogReader newReader(final long position)
    {
        if (position < startPosition)
        {
            throw new ArchiveException(PURGED, null, position, "log starts at " + startPosition);
        }
        if (position > publishedPosition.get())
        {
            throw new IllegalArgumentException("reader position " + position + " beyond published position " +
                publishedPosition.get());
        }
        final LogReader reader = new LogReader(this, position);
        if (position < publishedPosition.get())
        {
            reader.validator().checkFrameBoundary(directory, segmentLength, Math.max(initialPosition, startPosition),
                position);
        }
        return reader;
    }

    /**
     * Check every frame of a log directory without changing anything.
     *
     * @param directory log directory (its descriptor's segment length and batch bound are used).
     * @param handler   given every frame in order, or null.
     * @return where the log starts and ends, any torn tail recovery would cut, and damage below the promise.
     * @throws ArchiveException naming the file and position of the first damage a promise does not explain.
     */
    public static RecoveryReport verify(final Path directory, final FrameHandler handler)
    {
        return LogRecovery.verify(directory, handler);
    }

    /** A log's promise ({@link #promisedPosition()}): position -1 if none can be trusted; term of the frame there. */
    public record Promise(long position, long term)
    {
    }

    /** @return what a log directory promised (position -1 if nothing trusted), without opening or changing it. */
    public static Promise readPromise(final Path directory)
    {
        return PromiseFile.peek(directory.resolve(LogFormat.PROMISE_FILE));
    }

    /**
     * @return null, or how the promise file was found ("missing", "untrusted": no valid slot) beside a non-empty log
     * kept under {@code BATCH}, at this open or an earlier one ({@link PromiseLoss}): the promise was lost, and
     * stays lost until {@link #promiseKeptAgain()}.
     */
    public String promiseLost()
    {
        return promiseLost;
    }

    /**
     * The log durably holds what a leader of a later term committed, so what it acknowledged before the promise was
     * lost no longer matters: every committed frame is in it. Removes the mark, durably. Writer's thread.
     */
    public void promiseKeptAgain()
    {
        if (null != promiseLost)
        {
            PromiseLoss.forget(directory);
            promiseLost = null;
        }
    }

    /** @return what recovery found when the log was opened. */
    public RecoveryReport recoveryReport()
    {
        return recoveryReport;
    }

    /** @return position after the last frame appended, including frames not yet flushed. */
    public long pendingPosition()
    {
        return batch.pendingPosition();
    }

    /** @return position after the last frame written to the operating system. */
    public long appendedPosition()
    {
        return appendedPosition;
    }

    /** @return position up to which the durability policy is met (under {@code BATCH}, rising on another thread). */
    public long durablePosition()
    {
        return null == logSync ? durablePosition : logSync.durablePosition();
    }

    /** @return position up to which readers may read; safe to call from any thread. */
    public long publishedPosition()
    {
        return publishedPosition.getAcquire();
    }

    /** @return position of the first frame still held; safe to call from any thread. */
    public long startPosition()
    {
        return startPosition;
    }

    /** @return the largest payload one frame can carry. */
    public int maxPayloadLength()
    {
        return batch.maxPayloadLength();
    }

    /** @return length of each segment file. */
    public int segmentLength()
    {
        return segmentLength;
    }

    /** @return the log directory. */
    public Path directory()
    {
        return directory;
    }

    int maxFrameLength()
    {
        return maxBatchLength - HEADER_LENGTH;
    }

    /**
     * Flush what is pending, make it durable, and release the files.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        try
        {
            if (!failed)
            {
                sync();
            }
        }
        finally
        {
            closed = true;
            if (null != backgroundSync)
            {
                backgroundSync.close();
            }
            final boolean syncStopped = null == logSync || logSync.stop();
            segment.close();
            if (syncStopped)
            {
                promise.close(); // not while a hung sync may still record into its mapping
            }
        }
    }

    int segmentDeletions()
    {
        return segmentDeletions;
    }

    private void useSegment(final long basePosition)
    {
        if (basePosition != segment.basePosition())
        {
            awaitSync(); // the sync thread forces the open segment: it must be done with it before it changes
        }
        try
        {
            segment.use(basePosition);
            if (null != logSync)
            {
                logSync.target(segment.channel(), SegmentFiles.segmentFile(directory, basePosition));
            }
        }
        catch (final ArchiveException ex)
        {
            // A new segment that finds no space is made again on the next try; anything else is fatal.
            failed = !NoSpace.is(ex);
            throw ex;
        }
    }

    /** Wait for the sync thread to make everything requested durable (under {@code BATCH}). */
    private void awaitSync()
    {
        checkSync(true);
    }

    /** Under {@code BATCH}: a failed sync fails the log (see {@link LogSync}); optionally wait for it first. */
    private void checkSync(final boolean await)
    {
        if (null != logSync)
        {
            try
            {
                if (await)
                {
                    logSync.await();
                }
                logSync.throwIfFailed();
            }
            catch (final ArchiveException ex)
            {
                failed = true;
                throw ex;
            }
        }
    }

    private void forceChannel()
    {
        try
        {
            segment.force();
        }
        catch (final ArchiveException ex)
        {
            failed = true;
            throw ex;
        }
    }

    private void checkUsable()
    {
        if (closed)
        {
            throw new IllegalStateException("log is closed: " + directory);
        }
        if (failed)
        {
            throw new IllegalStateException("log failed on an earlier write and must be reopened: " + directory);
        }
        checkSync(false);
    }
}
