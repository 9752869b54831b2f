package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SegmentUnmapperTest
{
    @TempDir
    Path dir;

    @Test
    void aReaderThatMovedOnLeavesOnlyTheSegmentItReadsAndTheOneBeforeMappedAndReadsEveryFrame() throws Exception
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 2000; i++) // 64 KiB segments: several rollovers
            {
                append(log, 1, 1, payload(7, i, 200));
            }
            log.flush();
            assertTrue(log.appendedPosition() > 4L * 64 * 1024, "several segments");
            try (LogReader reader = log.newReader(0))
            {
                final int[] index = { 0 };
                while (reader.poll((buffer, offset, length, position, term, type) ->
                {
                    assertArrayEquals(payload(7, index[0], 200), TestFrames.bytes(buffer, offset, length));
                    index[0]++;
                }, Long.MAX_VALUE, 100) > 0)
                {
                }
                assertEquals(2000, index[0]);
                // The segments passed are unmapped on the unmap thread: wait for it, bounded.
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (mappedSegments() > 2 && System.nanoTime() < deadline)
                {
                    Thread.onSpinWait();
                }
                assertEquals(2, mappedSegments(),
                    "only the segment the reader is in, and the one it left, stay mapped");
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (mappedSegments() > 0 && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            assertEquals(0, mappedSegments(), "a closed reader leaves nothing mapped");
        }
    }

    private long mappedSegments() throws IOException
    {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
            .filter(line -> line.contains(dir.toString()) && line.endsWith(SegmentFiles.SUFFIX))
            .map(line -> line.substring(line.indexOf('/')))
            .distinct()
            .count();
    }
}
