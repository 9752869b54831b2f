package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static io.lockstep.archive.TestFrames.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Truncation (Raft: a follower's conflicting suffix): what it removes, what it leaves on disk, and where it refuses.
 */
class ArchiveLogTruncateTest
{
    @TempDir
    Path dir;

    @Test
    void truncateRemovesTheSuffixAcrossSegments()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final List<Long> positions = new ArrayList<>();
            for (int i = 0; i < 600; i++)
            {
                positions.add(log.pendingPosition());
                append(log, 1, 1, payload(8, i, 250));
            }
            log.flush();
            final long cut = positions.get(100);
            log.truncate(cut);
            assertEquals(cut, log.appendedPosition());
            assertEquals(cut, log.publishedPosition());
            assertEquals(100, readAll(log, 0).size());
            assertEquals(1, SegmentFiles.listBasePositions(dir).length);

            append(log, 2, 1, payload(9, 0, 250));
            log.flush();
            final List<TestFrames.Frame> frames = readAll(log, 0);
            assertEquals(101, frames.size());
            assertEquals(2, frames.get(100).term());
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertEquals(101, readAll(log, 0).size(), "truncation survives reopening");
        }
    }

    @Test
    void truncationZeroesTheRestOfItsSegmentSoRecoveryNeverFindsTheCutFramesAgain() throws Exception
    {
        final long cut;
        final long end;
        final long lastKept;
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            final List<Long> positions = new ArrayList<>();
            for (int i = 0; i < 40; i++)
            {
                positions.add(log.pendingPosition());
                append(log, 1, 1, payload(8, i, 250));
            }
            log.flush();
            end = log.appendedPosition();
            cut = positions.get(10);
            lastKept = positions.get(9);
            log.truncate(cut);
        }
        final byte[] segment = Files.readAllBytes(SegmentFiles.segmentFile(dir, 0));
        for (long p = cut; p < end; p++)
        {
            assertEquals(0, segment[(int)p], "byte " + p + " after the cut at " + cut);
        }
        assertNotEquals(0, segment[(int)lastKept], "the frame before the cut is kept (its length's first byte)");
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertEquals(cut, log.appendedPosition(), "reopened, the log ends at the cut");
            assertEquals(10, readAll(log, 0).size());
        }
    }

    @Test
    void truncateInsideAFrameIsRefused()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            append(log, 1, 1, payload(10, 0, 100));
            append(log, 1, 1, payload(10, 1, 100));
            log.flush();
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> log.truncate(64));
            assertEquals(ArchiveException.Reason.NOT_FRAME_BOUNDARY, ex.reason());
            assertThrows(ArchiveException.class, () -> log.truncate(33));
            append(log, 1, 1, payload(10, 2, 100));
            assertThrows(IllegalStateException.class, () -> log.truncate(0), "pending frames must be flushed first");
        }
    }
}
