package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackgroundSyncTest
{
    @TempDir
    Path dir;

    @Test
    void aRetiredSegmentIsForcedAndClosedOffTheWritersThreadAndSyncWaitsForIt() throws IOException
    {
        final Path file = Files.createFile(dir.resolve("segment"));
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE);
        final BackgroundSync sync = new BackgroundSync("test", 60_000_000_000L); // its own interval never comes
        try
        {
            sync.retire(channel, file);
            sync.awaitRetired();
            assertFalse(channel.isOpen(), "closed once forced");
        }
        finally
        {
            sync.close();
        }
    }

    @Test
    void aForceThatFailsIsReportedToTheWriterNamingTheSegment() throws IOException
    {
        final Path file = Files.createFile(dir.resolve("segment"));
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE);
        channel.close(); // force() now throws ClosedChannelException, as an I/O error would
        final BackgroundSync sync = new BackgroundSync("test", 60_000_000_000L);
        try
        {
            sync.retire(channel, file);
            final ArchiveException ex = assertThrows(ArchiveException.class, sync::awaitRetired);
            assertTrue(ex.getMessage().contains("fsync failed"), ex.getMessage());
            assertTrue(ex.getMessage().contains(file.toString()), ex.getMessage());
            sync.awaitRetired(); // reported once
        }
        finally
        {
            sync.close();
        }
    }

    @Test
    void afterRollingOverOnlyTheCurrentSegmentStaysOpenAndEveryFrameReadsBack() throws IOException
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 2000; i++) // 64 KiB segments: several rollovers
            {
                append(log, 1, 1, payload(5, i, 200));
            }
            log.sync();
            assertTrue(log.appendedPosition() > 4L * 64 * 1024, "rolled over several times");
            assertEquals(1, openSegments(), "the segments left behind were closed by the background thread");
        }
        try (ArchiveLog reopened = ArchiveLog.open(config(dir)))
        {
            assertEquals(2000, TestFrames.readAll(reopened, 0).size());
        }
    }

    private long openSegments() throws IOException
    {
        try (var fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.filter(fd ->
            {
                try
                {
                    return Files.readSymbolicLink(fd).startsWith(dir) &&
                        Files.readSymbolicLink(fd).getFileName().toString().endsWith(SegmentFiles.SUFFIX);
                }
                catch (final IOException ex)
                {
                    return false; // gone meanwhile
                }
            }).count();
        }
    }
}
