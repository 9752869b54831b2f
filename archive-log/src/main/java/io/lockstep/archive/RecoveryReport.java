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
 */
public record RecoveryReport(
    long startPosition,
    long endPosition,
    long lastTerm,
    long framesScanned,
    Path tornTailFile,
    long tornTailPosition,
    long tornTailBytes,
    String tornTailReason)
{
    /**
     * @return true if a torn tail was found.
     */
    public boolean hasTornTail()
    {
        return null != tornTailFile;
    }
}
