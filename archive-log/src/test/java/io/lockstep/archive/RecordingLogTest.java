package io.lockstep.archive;

import io.lockstep.archive.codecs.RecordingType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordingLogTest
{
    @TempDir
    Path dir;

    @Test
    void termsAndSnapshotsSurviveReopening()
    {
        final RecordingLog log = RecordingLog.open(dir);
        assertTrue(log.entries().isEmpty());
        log.appendTerm(1, 0, 2, 1000);
        log.appendTerm(2, 4096, 0, 2000);
        log.appendSnapshot(2, 8192, 0, 2500, "snapshot-8192-0-2.snap");
        log.appendSnapshot(2, 8192, 1, 2500, "snapshot-8192-1-2.snap");

        final RecordingLog reopened = RecordingLog.open(dir);
        assertEquals(log.entries(), reopened.entries());
        assertEquals(new RecordingLog.Entry(RecordingType.TERM, 2, 4096, 0, 2000, -1, ""), reopened.lastTerm());
        assertEquals(1, reopened.termAt(4095).term());
        assertEquals(2, reopened.termAt(4096).term());
        assertNull(RecordingLog.open(dir.resolve("nothing-here")).termAt(0));
        assertEquals("snapshot-8192-1-2.snap", reopened.latestSnapshot(1).location());
        assertNull(reopened.latestSnapshot(7));
    }

    @Test
    void termsMustGoUp()
    {
        final RecordingLog log = RecordingLog.open(dir);
        log.appendTerm(5, 100 * 32, 1, 0);
        assertThrows(IllegalArgumentException.class, () -> log.appendTerm(5, 200 * 32, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> log.appendTerm(6, 32, 1, 0));
        assertEquals(1, RecordingLog.open(dir).entries().size(), "a refused record is not written");
    }

    @Test
    void anyDamagedByteIsReportedAsCorruptRecordingLog() throws Exception
    {
        final RecordingLog log = RecordingLog.open(dir);
        log.appendTerm(1, 0, 0, 1);
        log.appendSnapshot(1, 64, 0, 2, "snapshot-64-0-1.snap");
        final Path file = dir.resolve(RecordingLog.FILE_NAME);
        final long length = Files.size(file);
        for (long offset = 8; offset < length; offset++)
        {
            final byte[] original = Files.readAllBytes(file);
            ArchiveLogTest.flipByte(file, offset);
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> RecordingLog.open(dir), "offset "
                + offset);
            assertTrue(ex.reason() == ArchiveException.Reason.CORRUPT_RECORDING_LOG ||
                ex.reason() == ArchiveException.Reason.UNSUPPORTED_FORMAT, ex.getMessage());
            assertEquals(file, ex.file());
            Files.write(file, original);
        }
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(length - 3);
        }
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> RecordingLog.open(dir));
        assertEquals(ArchiveException.Reason.CORRUPT_RECORDING_LOG, ex.reason());
    }

    @Test
    void leftoverTemporaryFileFromACrashedUpdateIsIgnored() throws Exception
    {
        final RecordingLog log = RecordingLog.open(dir);
        log.appendTerm(1, 0, 0, 1);
        // A crash after writing part of the next version leaves only the temporary file half written.
        Files.write(dir.resolve(RecordingLog.FILE_NAME + ".tmp"), new byte[]{ 1, 2, 3 });
        assertEquals(1, RecordingLog.open(dir).entries().size());
        RecordingLog.open(dir).appendTerm(2, 32, 1, 2);
        assertEquals(2, RecordingLog.open(dir).entries().size());
    }
}
