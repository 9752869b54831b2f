package io.lockstep.archive;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Read-only inspection of a member's stored data, for operators:
 * <pre>
 *   log describe DIR   descriptor, segments, start and end positions, recording log
 *   log verify DIR     check every frame; exit 0 if whole, 1 if damaged or not a log (naming file and position)
 * </pre>
 * Output lines are {@code key=value} so scripts can read them. Nothing is changed: a torn tail is reported, not cut.
 */
public final class LogTool
{
    private LogTool()
    {
    }

    public static void main(final String[] args)
    {
        System.exit(run(args, System.out, System.err));
    }

    static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        if (args.length != 2 || !(args[0].equals("describe") || args[0].equals("verify")))
        {
            err.println("usage: log describe DIR | log verify DIR");
            return 2;
        }
        final Path dir = Path.of(args[1]);
        if (!Files.isDirectory(dir))
        {
            err.println("log " + args[0] + ": no such directory: " + dir);
            return 2;
        }
        try
        {
            final LogDescriptorFile.Values values = LogDescriptorFile.read(dir);
            final long[] bases = SegmentFiles.listBasePositions(dir);
            final RecoveryReport report = ArchiveLog.verify(dir, null);
            final boolean damaged = report.lostPromisedFrames();
            final String status = PromiseFile.status(dir.resolve(LogFormat.PROMISE_FILE));
            final String lostAs = PromiseFile.OK.equals(status) ? PromiseLoss.read(dir) : null;
            final String promise = null != lostAs ? "lost_earlier" : status;
            out.printf("log status=%s dir=%s format_version=%d segment_length=%d max_batch_length=%d segments=%d " +
                "start_position=%d end_position=%d frames=%d last_term=%d promised_position=%d promise=%s%n",
                damaged ? "damaged" : report.hasTornTail() ? "torn_tail" : "ok", dir, values.formatVersion(),
                values.segmentLength(), values.maxBatchLength(), bases.length, report.startPosition(),
                report.endPosition(), report.framesScanned(), report.lastTerm(), report.promisedPosition(), promise);
            warnOfLostPromise(err, args[0], lostAs, promise, report);
            if (damaged)
            {
                // Frames this member made durable, and may have acknowledged, are damaged or missing.
                out.printf("damaged file=%s position=%d promised_position=%d reason=\"%s\" (the member cuts the " +
                    "log there on open, keeps the bytes in damaged-%d.bin, and fetches the frames again from the " +
                    "cluster; it neither votes nor stands as if it held them meanwhile)%n",
                    report.tornTailFile(), report.endPosition(), report.promisedPosition(),
                    report.hasTornTail() ? report.tornTailReason() : "log ends below what it promised",
                    report.endPosition());
                err.println("log " + args[0] + ": frames below the promised position " + report.promisedPosition() +
                    " are damaged or missing from position " + report.endPosition());
                return 1;
            }
            if (report.hasTornTail())
            {
                out.printf("torn_tail file=%s position=%d bytes=%d reason=\"%s\" (never acknowledged; recovery " +
                    "will cut it on open)%n",
                    report.tornTailFile(), report.tornTailPosition(), report.tornTailBytes(), report.tornTailReason());
            }
            if (args[0].equals("describe"))
            {
                describeRecordingLog(dir, out);
            }
            return 0;
        }
        catch (final ArchiveException ex)
        {
            out.printf("log status=error dir=%s reason=%s file=%s position=%d%n",
                dir, ex.reason(), ex.file(), ex.position());
            err.println("log " + args[0] + ": " + ex.getMessage());
            return 1;
        }
    }

    private static void describeRecordingLog(final Path dir, final PrintStream out)
    {
        final Path parent = null != dir.getParent() ? dir.getParent() : dir;
        for (final Path candidate : new Path[]{ dir, parent })
        {
            if (Files.exists(candidate.resolve(RecordingLog.FILE_NAME)))
            {
                for (final RecordingLog.Entry e : RecordingLog.open(candidate).entries())
                {
                    out.printf("recording type=%s term=%d position=%d leader=%d timestamp=%d service=%d location=%s%n",
                        e.type(), e.term(), e.position(), e.leaderMemberId(), e.timestamp(), e.serviceId(),
                        e.location().isEmpty() ? "-" : e.location());
                }
                return;
            }
        }
    }

    /** @param lostAs how the promise was found at an earlier start, if its loss is still marked; else null. */
    private static void warnOfLostPromise(final PrintStream err, final String name, final String lostAs,
        final String promise, final RecoveryReport report)
    {
        if (null != lostAs)
        {
            err.println("log " + name + ": warning: its promise was found " + lostAs + " at an " +
                "earlier start (" + PromiseLoss.FILE_NAME + "), and the member has not held a later leader's " +
                "committed log since");
        }
        else if (!PromiseFile.OK.equals(promise) && report.endPosition() > report.startPosition())
        {
            err.println("log " + name + ": warning: " + LogFormat.PROMISE_FILE + " is " + promise + " beside " +
                "a log of " + (report.endPosition() - report.startPosition()) + " bytes: under batch durability " +
                "it was lost or damaged, and damage to acknowledged frames cannot be told from a torn last write " +
                "(under none durability, a machine restart leaves it untrusted: expected)");
        }
    }
}
