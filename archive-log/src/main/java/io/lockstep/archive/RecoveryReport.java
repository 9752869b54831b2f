package io.lockstep.archive;

import java.nio.file.Path;

/**
 * What opening or verifying a log found.
 *
 * @param startPosition    position of the first frame still held (after purges).
 * @param endPosition      position after the last whole frame: where the next append goes.
 * @param lastTerm         term of the last frame, or {@link ArchiveLog#NULL_TERM} if the log is empty.
 * @param framesScanned    frames checked (recovery checks the last two segments; verification checks all).
 * @param tornTailFile     segment holding a torn tail, or null if the tail was clean.
 * @param tornTailPosition log position where the torn tail starts (equal to endPosition), or -1.
 * @param tornTailBytes    bytes of the torn tail, cut by recovery (verification only reports them).
 * @param tornTailReason   what was wrong with the first bad frame, or null.
 * @param promisedPosition the highest position the log may have acknowledged before it was opened, or
 *                         {@code -1} if that could not be trusted.
 */
public record RecoveryReport(
    long startPosition,
    long endPosition,
    long lastTerm,
    long framesScanned,
    Path tornTailFile,
    long tornTailPosition,
    long tornTailBytes,
    String tornTailReason,
    long promisedPosition)
{
    /**
     * A report that knows no promise.
     */
    public RecoveryReport(
        final long startPosition,
        final long endPosition,
        final long lastTerm,
        final long framesScanned,
        final Path tornTailFile,
        final long tornTailPosition,
        final long tornTailBytes,
        final String tornTailReason)
    {
        this(startPosition, endPosition, lastTerm, framesScanned, tornTailFile, tornTailPosition, tornTailBytes,
            tornTailReason, -1);
    }

    /**
     * @return true if the log ends below what it may have acknowledged: frames it made durable were found damaged
     * (cut from the first bad one) or missing. The member must get them back before it acts as if it held them.
     */
    public boolean lostPromisedFrames()
    {
        return promisedPosition >= 0 && endPosition < promisedPosition;
    }

    /**
     * @return true if a torn tail was found.
     */
    public boolean hasTornTail()
    {
        return null != tornTailFile;
    }
}
