package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Path;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogReaderDamageTest
{
    @TempDir
    Path dir;

    @Test
    void aReaderMadeToStopAtDamageHandsOutTheFramesBeforeItAndSaysWhere() throws Exception
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final long second = append(log, 1, 1, payload(3, 0, 100));
            final long third = append(log, 1, 1, payload(3, 1, 100));
            final long end = append(log, 1, 1, payload(3, 2, 100));
            log.flush();
            // A bit flipped in the second frame's payload, under the running log (the page cache the readers map).
            try (RandomAccessFile file = new RandomAccessFile(dir.resolve(SegmentFiles.name(0)).toFile(), "rw"))
            {
                file.seek(second + 40);
                final int b = file.read();
                file.seek(second + 40);
                file.write(b ^ 0x01);
            }

            try (LogReader strict = log.newReader(0))
            {
                final ArchiveException ex = assertThrows(ArchiveException.class,
                    () -> strict.readBlock((buffer, offset, length, from, to) -> { }, end, 1 << 20));
                assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason());
            }

            try (LogReader reader = log.newReader(0).stopAtDamage())
            {
                final long[] block = { -1, -1 };
                final int bytes = reader.readBlock((buffer, offset, length, from, to) ->
                {
                    block[0] = from;
                    block[1] = to;
                }, end, 1 << 20);
                assertEquals(second, bytes, "the whole frame before the damaged one");
                assertEquals(0, block[0]);
                assertEquals(second, block[1]);
                assertEquals(second, reader.damagedAt());
                assertTrue(reader.damage().contains("checksum") && reader.damage().contains(".seg"),
                    reader.damage());

                assertEquals(0, reader.readBlock((buffer, offset, length, from, to) -> { }, end, 1 << 20),
                    "nothing past the damaged frame");
                assertEquals(second, reader.damagedAt());

                // Cut there and written again (what a member does with the frame fetched from a peer): read on.
                log.truncate(second);
                assertEquals(third, append(log, 1, 1, payload(3, 1, 100)));
                log.flush();
                assertEquals(third - second, reader.readBlock((buffer, offset, length, from, to) -> { }, third,
                    1 << 20));
                assertEquals(-1, reader.damagedAt());
            }
        }
    }
}
