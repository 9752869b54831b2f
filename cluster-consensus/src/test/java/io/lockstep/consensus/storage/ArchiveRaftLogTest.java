package io.lockstep.consensus.storage;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.archive.LogFormat;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Purge and reset of the consensus log over archive-log, including crashes part way through each.
 */
class ArchiveRaftLogTest
{
    private static final int SEGMENT = 64 * 1024;

    @TempDir
    Path dir;

    private ArchiveLogConfig config()
    {
        return new ArchiveLogConfig().directory(dir.resolve("log")).segmentLength(SEGMENT).maxBatchLength(16 * 1024)
            .durability(DurabilityPolicy.BATCH);
    }

    /** Frames of 1 KiB, the term going up every 50, so that terms change inside segments. */
    private static List<Long> fill(final ArchiveRaftLog log, final int frames)
    {
        final List<Long> ends = new ArrayList<>();
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[1024 - 32]);
        for (int i = 0; i < frames; i++)
        {
            long end = log.append(1 + i / 50, 7, payload, 0, payload.capacity());
            if (end < 0)
            {
                log.flush();
                end = log.append(1 + i / 50, 7, payload, 0, payload.capacity());
            }
            ends.add(end);
        }
        log.flush();
        return ends;
    }

    @Test
    void purgeDropsWholeSegmentsAndKeepsTheTermWhereTheLogNowStarts()
    {
        final long start;
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 300);
            start = log.purge(3 * SEGMENT + 100, position -> position / (50 * 1024) + 1);
            assertEquals(3 * SEGMENT, start);
            assertEquals(3 * SEGMENT / (50 * 1024) + 1, log.startTerm());
            final ArchiveException ex = assertThrows(ArchiveException.class,
                () -> log.readBlock(SEGMENT, log.appendedPosition(), 4096, (b, o, l, s, e) -> { }));
            assertEquals(ArchiveException.Reason.PURGED, ex.reason());
        }
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(start, reopened.startPosition());
            assertEquals(start / (50 * 1024) + 1, reopened.startTerm(), "the start term survives a restart");
        }
    }

    @Test
    void aDelayedPurgeRefusesReadsBelowTheStartAtOnceAndDeletesWhenCloseHurriesIt() throws Exception
    {
        final long start;
        try (ArchiveRaftLog log = new ArchiveRaftLog(config(), TimeUnit.MINUTES.toNanos(10)))
        {
            fill(log, 300);
            assertEquals(5, segmentFiles());
            start = log.purge(3 * SEGMENT + 100, position -> 4);
            assertEquals(3 * SEGMENT, start);
            final ArchiveException ex = assertThrows(ArchiveException.class,
                () -> log.readBlock(SEGMENT, log.appendedPosition(), 4096, (b, o, l, s, e) -> { }));
            assertEquals(ArchiveException.Reason.PURGED, ex.reason());
            assertEquals(5, segmentFiles(), "the delete waits out its delay");
            assertFalse(Files.exists(dir.resolve("log.base")), "the base is saved just before the delete, not before");
        }
        assertEquals(2, segmentFiles(), "close does not wait ten minutes: it has the purge done now");
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(start, reopened.startPosition());
            assertEquals(4, reopened.startTerm());
        }
    }

    @Test
    void queuedDelayedPurgesEndWithTheLastOnesBaseAndStart()
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config(), TimeUnit.MINUTES.toNanos(10)))
        {
            fill(log, 300);
            assertEquals(2 * SEGMENT, log.purge(2 * SEGMENT + 100, position -> 3));
            assertEquals(4 * SEGMENT, log.purge(4 * SEGMENT + 100, position -> 5));
        }
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(4 * SEGMENT, reopened.startPosition());
            assertEquals(5, reopened.startTerm());
        }
    }

    @Test
    void aDelayedPurgeDeletesOnItsOwnOnceTheDelayHasPassed() throws Exception
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config(), TimeUnit.MILLISECONDS.toNanos(50)))
        {
            fill(log, 300);
            log.purge(3 * SEGMENT + 100, position -> 4);
            log.awaitPurgeThread(30_000); // the delayed purge, done by its own clock: nothing hurries it
            assertEquals(2, segmentFiles());
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[64]);
            assertTrue(log.append(5, 7, payload, 0, 64) > 0, "the log goes on after its purge");
        }
    }

    @Test
    void aResetDoesNotWaitOutADelayedPurge()
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config(), TimeUnit.MINUTES.toNanos(10)))
        {
            fill(log, 300);
            log.purge(3 * SEGMENT + 100, position -> 4);
            // Would take ten minutes (and fail the build's timeout) if the reset waited for the delay.
            log.reset(9 * SEGMENT, 6);
            assertEquals(9 * SEGMENT, log.startPosition());
            assertEquals(6, log.startTerm());
        }
    }

    private long segmentFiles() throws IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve("log")))
        {
            return files.filter(f -> f.getFileName().toString().endsWith(".seg")).count();
        }
    }

    @Test
    void aPurgeInterruptedAfterSavingTheBaseIsFinishedOnOpen()
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 300);
        }
        // The crash came after log.base was saved and before any segment was deleted.
        new LogBaseFile(dir.resolve("log.base")).save(2 * SEGMENT, 3);
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(2 * SEGMENT, reopened.startPosition());
            assertEquals(3, reopened.startTerm());
        }
    }

    @Test
    void resetStartsAnEmptyLogAtThePositionAndSurvivesARestart()
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 100);
            log.reset(5 * SEGMENT + 4096, 9);
            assertEquals(5 * SEGMENT + 4096, log.startPosition());
            assertEquals(5 * SEGMENT + 4096, log.appendedPosition());
            assertEquals(9, log.startTerm());
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[64]);
            assertEquals(5 * SEGMENT + 4096 + 96, log.append(10, 7, payload, 0, 64));
            log.flush();
        }
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(5 * SEGMENT + 4096, reopened.startPosition());
            assertEquals(9, reopened.startTerm());
            assertEquals(5 * SEGMENT + 4096 + 96, reopened.appendedPosition());
        }
    }

    @Test
    void aResetInterruptedAfterMovingTheOldLogAsideStartsCleanAtTheSavedBase() throws Exception
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 100);
            log.purge(SEGMENT, position -> 1);
        }
        // The crash came after the directory was renamed and before the new base was saved.
        Files.move(dir.resolve("log"), dir.resolve("log.discarded"));
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(SEGMENT, reopened.startPosition(), "an empty log at the base that was saved");
            assertEquals(SEGMENT, reopened.appendedPosition());
            assertEquals(1, reopened.startTerm());
            assertFalse(Files.exists(dir.resolve("log.discarded")), "the old log is deleted");
        }
    }

    @Test
    void aLostPromiseStaysLostThroughAResetAndAResetInterruptedWhileMakingTheNewLog() throws Exception
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 100);
        }
        Files.delete(dir.resolve("log").resolve(LogFormat.PROMISE_FILE));
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            assertEquals("missing", log.promiseLost());
            log.reset(5 * SEGMENT, 9);
            assertEquals("missing", log.promiseLost(), "the new log owes what the old one may have acknowledged");
        }
        // The crash came after the directory was renamed and while the new log was being made: it is empty.
        Files.move(dir.resolve("log"), dir.resolve("log.discarded"));
        Files.createDirectories(dir.resolve("log"));
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals("missing", reopened.promiseLost(), "taken from the log moved aside");
            assertFalse(Files.exists(dir.resolve("log.discarded")), "deleted once the new log holds the mark");
            reopened.promiseKeptAgain();
        }
        try (ArchiveRaftLog reopened = new ArchiveRaftLog(config()))
        {
            assertEquals(null, reopened.promiseLost());
        }
    }

    @Test
    void aDamagedBaseFileStopsTheMemberNamingIt() throws Exception
    {
        try (ArchiveRaftLog log = new ArchiveRaftLog(config()))
        {
            fill(log, 100);
            log.purge(SEGMENT, position -> 1);
        }
        final byte[] bytes = Files.readAllBytes(dir.resolve("log.base"));
        bytes[10] ^= 0x01;
        Files.write(dir.resolve("log.base"), bytes);
        final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> new ArchiveRaftLog(config()));
        assertTrue(ex.getMessage().contains("log.base is damaged"), ex.getMessage());
    }
}
