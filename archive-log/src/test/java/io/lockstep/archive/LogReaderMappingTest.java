package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a reader maps segments: the one it left stays mapped for a reader that goes back (the leader's replication
 * reader does at every rollover), and no mapping outlives the file it shows when truncation deletes segments.
 */
class LogReaderMappingTest
{
    private static final int PAYLOAD = 1000;

    @TempDir
    Path dir;

    /** Reads the one frame at the reader's position and remembers the buffer it came in. */
    private static final class OneFrame implements FrameHandler
    {
        DirectBuffer buffer;
        long term;
        byte[] payload;

        public void onFrame(final DirectBuffer buffer, final int offset, final int length, final long framePosition,
            final long term, final int frameType)
        {
            this.buffer = buffer;
            this.term = term;
            this.payload = TestFrames.bytes(buffer, offset, length);
        }
    }

    private static OneFrame readAt(final LogReader reader, final long position)
    {
        final OneFrame frame = new OneFrame();
        reader.seek(position);
        assertEquals(1, reader.poll(frame, Long.MAX_VALUE, 1), "a frame at " + position);
        return frame;
    }

    /** Appends frames until the log is into its second segment; returns each frame's position. */
    private static List<Long> fillIntoSecondSegment(final ArchiveLog log, final long term, final long seed)
    {
        final List<Long> positions = new ArrayList<>();
        for (int i = 0; log.pendingPosition() < log.segmentLength() + 8L * PAYLOAD; i++)
        {
            positions.add(log.pendingPosition());
            append(log, term, 1, payload(seed, i, PAYLOAD));
        }
        log.flush();
        return positions;
    }

    @Test
    void aReaderGoingBackAcrossABoundaryKeepsTheSegmentItLeftMapped()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final List<Long> positions = fillIntoSecondSegment(log, 1, 7);
            final long inFirst = positions.get(0);
            final long inSecond = positions.get(positions.size() - 1);
            assertTrue(inSecond >= log.segmentLength());
            try (LogReader reader = log.newReader(0))
            {
                final DirectBuffer first = readAt(reader, inFirst).buffer;
                final DirectBuffer second = readAt(reader, inSecond).buffer;
                assertNotSame(first, second);
                for (int i = 0; i < 5; i++)
                {
                    // The same mappings each time: going back and forth maps nothing anew.
                    assertSame(first, readAt(reader, inFirst).buffer);
                    assertSame(second, readAt(reader, inSecond).buffer);
                }
            }
        }
    }

    @Test
    void aMappingHeldAcrossATruncationThatDeletedItsFileIsNotReadAgain()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final List<Long> positions = fillIntoSecondSegment(log, 1, 7);
            final long inFirst = positions.get(0);
            final long cut = positions.get(2);
            try (LogReader reader = log.newReader(0))
            {
                readAt(reader, positions.get(positions.size() - 1)); // maps the second segment
                readAt(reader, inFirst); // back: the second stays mapped

                log.truncate(cut); // deletes the second segment's file
                assertEquals(1, SegmentFiles.listBasePositions(dir).length);
                final List<Long> rewritten = fillIntoSecondSegment(log, 2, 9); // and makes it again
                final long firstRewrittenInSecond = rewritten.stream()
                    .filter(p -> p >= log.segmentLength()).findFirst().orElseThrow();
                final int index = rewritten.indexOf(firstRewrittenInSecond);

                final OneFrame frame = readAt(reader, firstRewrittenInSecond);
                assertEquals(2, frame.term, "read from the segment file written after the truncation");
                assertArrayEquals(payload(9, index, PAYLOAD), frame.payload);
            }
        }
    }
}
