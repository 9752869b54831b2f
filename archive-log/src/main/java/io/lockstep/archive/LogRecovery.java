package io.lockstep.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What opening a log does before it is used: every frame of every segment is checked, and the tail is judged
 * against the promise ({@link PromiseFile}): a bad frame at or above it is a torn last write (never acknowledged)
 * and is cut; one below it is damage to durable frames, cut too (nothing past a gap can be served) but with the
 * damaged bytes kept aside and the promise kept, so the member knows it owes those frames. The whole log is
 * checked, not only its last segments, so that damage anywhere below the promise is repaired here rather than found
 * later by a reader, when the member can only stop.
 */
final class LogRecovery
{
    private static final System.Logger LOGGER = System.getLogger(LogRecovery.class.getName());

    private LogRecovery()
    {
    }

    /**
     * @return what recovery found, after any cut.
     */
    static RecoveryReport recover(
        final ArchiveLogConfig config, final LogDescriptorFile.Values values, final PromiseFile promise,
        final String promiseStatus)
    {
        final RecoveryReport report = new LogScanner(config.directory(), values, promise.position())
            .scan(true, false, config.recoveryHandler());
        markPromiseLoss(config, report, promiseStatus); // before the cut: a log cut to nothing had frames too
        if (report.hasTornTail())
        {
            cutTail(config.directory(), report, values.segmentLength());
        }
        keepPromise(config, report, promise);
        return report;
    }

    /**
     * Check every frame of a log directory, read-only; the promise, if one can be trusted, tells damage from a torn
     * tail as recovery would.
     */
    static RecoveryReport verify(final Path directory, final FrameHandler handler)
    {
        final LogDescriptorFile.Values values = LogDescriptorFile.read(directory);
        return new LogScanner(directory, values, ArchiveLog.readPromise(directory).position()).scan(true, true,
            handler);
    }

    /**
     * Before any new promise is made, and before a torn tail is cut: under BATCH a promise is forced after every
     * batch, so one missing or holding nothing beside a log (even one whose every frame is about to be cut as torn)
     * was lost or damaged, and recovery could not tell damage to acknowledged frames from a torn last write. A loss
     * found by an earlier open, or by the log this one replaces, stays marked.
     */
    private static void markPromiseLoss(final ArchiveLogConfig config, final RecoveryReport report,
        final String promiseStatus)
    {
        final Path directory = config.directory();
        final String lostEarlier = PromiseLoss.read(directory);
        if (null != lostEarlier)
        {
            LOGGER.log(System.Logger.Level.WARNING, "the promise of log {0} was found {1} at an earlier start, and " +
                "the member has not held a later leader''s committed log since: it still cannot vouch for what it " +
                "acknowledged before (lockstep_log_promise_lost=1; docs/how-to/deploy.md#a-lost-promise)", directory,
                lostEarlier);
        }
        else if (null != config.inheritedPromiseLoss())
        {
            PromiseLoss.remember(directory, config.inheritedPromiseLoss());
        }
        else if (DurabilityPolicy.BATCH == config.durability() && !PromiseFile.OK.equals(promiseStatus) &&
            (report.endPosition() > report.startPosition() || report.hasTornTail()))
        {
            PromiseLoss.remember(directory, promiseStatus);
            LOGGER.log(System.Logger.Level.WARNING, "{0} is {1} beside a log of {2,number,#} bytes under batch " +
                "durability: recovery could not tell damage to frames this member acknowledged from a torn last " +
                "write; a new promise is made from what the log holds (lockstep_log_promise_lost=1; " +
                "docs/how-to/deploy.md#a-lost-promise)",
                directory.resolve(LogFormat.PROMISE_FILE), promiseStatus,
                report.endPosition() - report.startPosition());
        }
    }

    private static void keepPromise(final ArchiveLogConfig config, final RecoveryReport report,
        final PromiseFile promise)
    {
        final boolean forced = DurabilityPolicy.BATCH == config.durability();
        if (isAhead(config.initialPromiseTerm(), config.initialPromisePosition(), promise.term(), promise.position()))
        {
            // Inherited from the log this one replaces: still owed.
            promise.record(config.initialPromisePosition(), config.initialPromiseTerm(), true);
            promise.force();
        }
        if (report.lostPromisedFrames())
        {
            LOGGER.log(System.Logger.Level.ERROR, "log {0} ends at {1} but had made frames durable up to {2} (term " +
                "{3}), which it may have acknowledged: those frames are owed until the cluster sends them again",
                config.directory(), report.endPosition(), promise.position(), promise.term());
        }
        else if (isAhead(report.lastTerm(), report.endPosition(), promise.term(), promise.position()))
        {
            // No promise could be trusted (a log from before promises, or NONE across a machine restart), or frames
            // were written after the last promise: promise what is there now.
            promise.record(report.endPosition(), report.lastTerm(), forced);
            if (forced)
            {
                promise.force();
            }
        }
    }

    /**
     * @return true if a log ending at (term, position) is strictly ahead of one ending at (otherTerm,
     * otherPosition), in Raft's order: the later last term wins, then the longer log.
     */
    static boolean isAhead(final long term, final long position, final long otherTerm, final long otherPosition)
    {
        return term > otherTerm || (term == otherTerm && position > otherPosition);
    }

    private static void cutTail(final Path directory, final RecoveryReport report, final int segmentLength)
    {
        final long position = report.tornTailPosition();
        final long base = FrameDescriptor.segmentBase(position, segmentLength);
        final long from = position - base;
        final long to = Math.min(segmentLength, from + report.tornTailBytes());
        final boolean damage = position < report.promisedPosition();
        if (damage)
        {
            setAside(directory, report.tornTailFile(), position, from, to);
        }
        final long[] bases = SegmentFiles.listBasePositions(directory);
        for (int i = bases.length - 1; i >= 0 && bases[i] > base; i--)
        {
            // Highest first: a crash part-way leaves a contiguous log, never one with a hole.
            SegmentFiles.delete(directory, bases[i]);
        }
        try (FileChannel channel = SegmentFiles.openForWrite(report.tornTailFile()))
        {
            SegmentFiles.zero(channel, report.tornTailFile(), from, to);
            channel.force(false);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(report.tornTailFile(), "cannot cut the log's tail", ex);
        }
        // The deletes (and the damaged bytes set aside) are names in the directory: durable only once it is synced,
        // or a power loss could bring back segments from above the cut.
        SegmentFiles.fsyncDirectory(directory);
        if (damage)
        {
            LOGGER.log(System.Logger.Level.ERROR, "damaged frame at position {0,number,#} in {1} ({2}), below the " +
                "{3,number,#} this log may have acknowledged: cut {4,number,#} bytes from there (the damaged " +
                "segment''s bytes are kept in damaged-{0,number,#}.bin); the member fetches them again from the " +
                "cluster", position,
                report.tornTailFile(), report.tornTailReason(), report.promisedPosition(), report.tornTailBytes());
        }
        else
        {
            LOGGER.log(System.Logger.Level.WARNING, "cut torn tail of {0} bytes at position {1} in {2}: {3}",
                report.tornTailBytes(), position, report.tornTailFile(), report.tornTailReason());
        }
    }

    /**
     * Copy the bytes of a segment from a damaged frame on into a file beside the log, for whoever investigates.
     */
    private static void setAside(final Path directory, final Path segment, final long position, final long from,
        final long to)
    {
        final Path target = directory.resolve("damaged-" + position + ".bin");
        try (FileChannel in = FileChannel.open(segment, StandardOpenOption.READ);
            FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
        {
            in.transferTo(from, to - from, out);
            out.force(true);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(target, "cannot set damaged log bytes aside", ex);
        }
    }
}
