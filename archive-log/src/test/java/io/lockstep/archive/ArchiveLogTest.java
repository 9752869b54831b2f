package io.lockstep.archive;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.lockstep.archive.TestFrames.append;
import static io.lockstep.archive.TestFrames.config;
import static io.lockstep.archive.TestFrames.payload;
import static io.lockstep.archive.TestFrames.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ArchiveLogTest
{
    @TempDir
    Path dir;

    @Test
    void appendedFramesReadBackWithPositionTermAndType()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final long p1 = append(log, 3, 7, payload(1, 0, 100));
            final long p2 = append(log, 4, 8, payload(1, 1, 0));
            assertEquals(FrameDescriptor.alignedFrameLength(100), p1);
            assertEquals(p1 + FrameDescriptor.alignedFrameLength(0), p2);
            assertEquals(0, log.publishedPosition(), "nothing visible before flush");

            assertEquals(p2, log.flush());
            final List<TestFrames.Frame> frames = readAll(log, 0);
            assertEquals(2, frames.size());
            assertEquals(0, frames.get(0).position());
            assertEquals(3, frames.get(0).term());
            assertEquals(7, frames.get(0).type());
            assertArrayEquals(payload(1, 0, 100), frames.get(0).payload());
            assertEquals(p1, frames.get(1).position());
            assertEquals(4, frames.get(1).term());
            assertEquals(0, frames.get(1).payload().length);
        }
    }

    @Test
    void claimedFramesAreEncodedInPlaceAndReadBackLikeAppendedOnes()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final byte[] expected = payload(16, 0, 77);
            final int index = log.tryClaim(9, 5, expected.length);
            assertTrue(index >= 0);
            log.claimBuffer().putBytes(index, expected);
            append(log, 9, 6, payload(16, 1, 10));
            log.flush();

            final List<TestFrames.Frame> frames = readAll(log, 0);
            assertEquals(2, frames.size());
            assertEquals(5, frames.get(0).type());
            assertEquals(9, frames.get(0).term());
            assertArrayEquals(expected, frames.get(0).payload());
            assertArrayEquals(payload(16, 1, 10), frames.get(1).payload());

            int claims = 0;
            while (log.tryClaim(9, 5, 1000) >= 0)
            {
                claims++;
            }
            assertEquals(7, claims);
            assertEquals((int)ArchiveLog.BACK_PRESSURED, log.tryClaim(9, 5, 1000));
        }
    }

    @Test
    void fullBatchReturnsBackPressureUntilFlushed()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final UnsafeBuffer src = new UnsafeBuffer(new byte[1000]);
            int appended = 0;
            while (log.append(1, 0, src, 0, 1000) > 0)
            {
                appended++;
            }
            assertEquals(7, appended, "8 KiB batch holds seven 1056-byte frames");
            assertEquals(ArchiveLog.BACK_PRESSURED, log.append(1, 0, src, 0, 1000));
            log.flush();
            assertTrue(log.append(1, 0, src, 0, 1000) > 0);
        }
    }

    @Test
    void oversizedPayloadAndReservedTypeAreRejected()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final UnsafeBuffer src = new UnsafeBuffer(new byte[log.maxPayloadLength() + 1]);
            assertThrows(IllegalArgumentException.class, () -> log.append(1, 0, src, 0, log.maxPayloadLength() + 1));
            assertThrows(IllegalArgumentException.class, () -> log.append(1, -1, src, 0, 10));
            assertTrue(log.append(1, 0, src, 0, log.maxPayloadLength()) > 0);
        }
    }

    @Test
    void framesNeverCrossASegmentEndAndReadAcrossSegments()
    {
        final List<byte[]> written = new ArrayList<>();
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 500; i++)
            {
                final byte[] p = payload(2, i, 300 + (i % 7) * 100);
                written.add(p);
                append(log, 1, 1, p);
                if (i % 5 == 0)
                {
                    log.flush();
                }
            }
            log.flush();
            assertTrue(log.appendedPosition() > 4 * log.segmentLength(), "spans several segments");
            final List<TestFrames.Frame> frames = readAll(log, 0);
            assertEquals(written.size(), frames.size());
            for (int i = 0; i < frames.size(); i++)
            {
                final TestFrames.Frame f = frames.get(i);
                assertArrayEquals(written.get(i), f.payload(), "frame " + i);
                final long segmentOfStart = f.position() / log.segmentLength();
                final long segmentOfLastByte =
                    (f.position() + FrameDescriptor.alignedFrameLength(f.payload().length) - 1) / log.segmentLength();
                assertEquals(segmentOfStart, segmentOfLastByte, "frame " + i + " crosses a segment end");
            }
        }
    }

    @Test
    void reopenRecoversTheEndPositionAndContinuesAppending()
    {
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 300; i++)
            {
                append(log, 2, 1, payload(3, i, 200));
            }
            end = log.flush();
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertEquals(end, log.appendedPosition());
            assertEquals(2, log.recoveryReport().lastTerm());
            assertFalse(log.recoveryReport().hasTornTail());
            append(log, 3, 1, payload(3, 300, 200));
            log.flush();
            final List<TestFrames.Frame> frames = readAll(log, 0);
            assertEquals(301, frames.size());
            assertArrayEquals(payload(3, 300, 200), frames.get(300).payload());
        }
    }

    @SuppressWarnings("try") // the logs are opened only to count the sync threads they start
    @Test
    void backgroundSyncRunsOnlyUnderNoneAndStopsOnClose()
    {
        final Supplier<Long> syncThreads = () -> Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("log-background-sync-") && t.isAlive()).count();
        final long before = syncThreads.get();
        final ArchiveLog none = ArchiveLog.open(config(dir.resolve("none")));
        append(none, 1, 1, payload(17, 0, 100));
        none.flush();
        assertEquals(before + 1, syncThreads.get(), "NONE starts one");
        none.close();
        assertEquals(before, syncThreads.get(), "and close stops it");
        try (ArchiveLog batch = ArchiveLog.open(config(dir.resolve("batch")).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals(before, syncThreads.get(), "BATCH forces every batch itself");
        }
        try (ArchiveLog off = ArchiveLog.open(config(dir.resolve("off")).backgroundSyncIntervalMs(0)))
        {
            assertEquals(before, syncThreads.get(), "0 turns it off");
        }
    }

    @Test
    void durablePositionFollowsPolicy()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            final long end = append(log, 1, 1, payload(4, 0, 64));
            assertEquals(0, log.durablePosition());
            assertTrue(log.flush() <= end, "the sync runs on the log's sync thread: durable follows");
            assertEquals(end, log.appendedPosition(), "written, and readable, before it is durable");
            assertEquals(end, log.sync());
            assertEquals(end, log.durablePosition());
            assertEquals(end, log.promisedPosition(), "promised once durable");
        }
    }

    @Test
    void aSlowDiskHoldsBackOnlyTheDurablePositionNotTheWriter() throws Exception
    {
        final Path slow = dir.resolveSibling(dir.getFileName() + "-slow");
        Files.writeString(slow, "2000");
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH).slowSyncFile(slow)))
        {
            final CountDownLatch durable = new CountDownLatch(1);
            log.onDurable(durable::countDown);
            final long end = append(log, 1, 1, payload(4, 0, 64));
            final long promised = log.promisedPosition();
            final long startNs = System.nanoTime();
            log.flush();
            final long flushNs = System.nanoTime() - startNs;
            assertTrue(flushNs < 1_000_000_000L, "the writer does not wait for the disk: " + flushNs + " ns");
            assertEquals(end, log.appendedPosition());
            final long more = append(log, 1, 1, payload(4, 1, 64));
            log.flush(); // a second request wakes the sync thread: the delay holds all the same
            assertEquals(more, log.appendedPosition());
            assertEquals(0, log.durablePosition(), "not durable while the disk is slow");
            assertEquals(promised, log.promisedPosition(), "nor promised");
            Files.delete(slow);
            assertTrue(durable.await(10, TimeUnit.SECONDS), "the sync thread says when it is durable");
            assertEquals(more, log.sync());
            assertEquals(more, log.promisedPosition());
        }
    }

    @Test
    void tornTailIsCutAndReported() throws Exception
    {
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 10; i++)
            {
                append(log, 1, 1, payload(5, i, 100));
            }
            end = log.flush();
        }
        // A crash during the next write: a header that promises more than was written, and some of its bytes.
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve(SegmentFiles.name(0)).toFile(), "rw"))
        {
            file.seek(end);
            file.write(new byte[]{ (byte)200, 1, 0, 0, 9, 9, 9, 9, 1, 2, 3 });
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final RecoveryReport report = log.recoveryReport();
            assertTrue(report.hasTornTail());
            assertEquals(end, report.tornTailPosition());
            assertEquals(11, report.tornTailBytes());
            assertEquals(end, log.appendedPosition());
            assertEquals(10, readAll(log, 0).size());
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertFalse(log.recoveryReport().hasTornTail(), "the cut is permanent");
        }
    }

    @Test
    void damageBelowThePromiseIsCutSetAsideAndStaysOwed() throws Exception
    {
        final long victim;
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            append(log, 1, 1, payload(6, 0, 100));
            victim = append(log, 1, 1, payload(6, 1, 100));
            for (int i = 2; i < 150; i++)
            {
                append(log, 2, 1, payload(6, i, 100));
            }
            end = log.sync();
            assertEquals(end, log.promisedPosition());
            assertEquals(2, log.promisedTerm());
        }
        // Within one batch of the end is no excuse: these frames were flushed and promised.
        flipByte(dir.resolve(SegmentFiles.name(0)), victim + 40);

        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            final RecoveryReport report = log.recoveryReport();
            assertTrue(report.lostPromisedFrames(), "damage below the promise is not a torn tail");
            assertEquals(victim, report.endPosition());
            assertEquals(end, report.promisedPosition());
            assertTrue(report.tornTailReason().contains("checksum"), report.tornTailReason());
            assertEquals(victim, log.appendedPosition());
            assertEquals(end, log.promisedPosition(), "the promise is kept: those frames are owed");
            assertEquals(2, log.promisedTerm());
            assertEquals(report.tornTailBytes(), Files.size(dir.resolve("damaged-" + victim + ".bin")));
            assertTrue(report.tornTailBytes() > end - victim - 32, "the damaged frame and all after it are kept");
            assertEquals(2, readAll(log, 0).size(), "the frames before the damaged one");
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertTrue(log.recoveryReport().lostPromisedFrames(), "still owed after another restart");
            // Frames from the cluster fill the gap: once the log is back at the promise, nothing is owed.
            for (int i = 2; i < 150; i++)
            {
                append(log, 2, 1, payload(6, i, 100));
            }
            assertEquals(end, log.sync());
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertFalse(log.recoveryReport().lostPromisedFrames());
            assertFalse(log.recoveryReport().hasTornTail());
        }
    }

    @Test
    void aTornWriteAboveThePromiseIsCutWithoutOwingAnything() throws Exception
    {
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            for (int i = 0; i < 20; i++)
            {
                append(log, 1, 1, payload(8, i, 100));
            }
            end = log.sync();
        }
        // Bytes of a write that never finished (so never promised), one segment on and far past one batch.
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve(SegmentFiles.name(0)).toFile(), "rw"))
        {
            file.seek(end + 20_000);
            file.write(new byte[]{ 7, 7, 7 });
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertTrue(log.recoveryReport().hasTornTail());
            assertFalse(log.recoveryReport().lostPromisedFrames());
            assertEquals(end, log.appendedPosition());
            assertFalse(Files.exists(dir.resolve("damaged-" + end + ".bin")));
        }
    }

    @Test
    void aLostWriteBelowThePromiseIsOwed() throws Exception
    {
        final long mid;
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 10; i++)
            {
                append(log, 1, 1, payload(9, i, 100));
            }
            mid = log.flush();
            for (int i = 10; i < 20; i++)
            {
                append(log, 1, 1, payload(9, i, 100));
            }
            end = log.flush();
        }
        // The disk said the second write was done, and it was not: zeros where frames were.
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve(SegmentFiles.name(0)).toFile(), "rw"))
        {
            file.seek(mid);
            file.write(new byte[(int)(end - mid)]);
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertFalse(log.recoveryReport().hasTornTail(), "nothing damaged, only missing");
            assertTrue(log.recoveryReport().lostPromisedFrames());
            assertEquals(mid, log.appendedPosition());
            assertEquals(end, log.promisedPosition());
        }
    }

    @Test
    void anUnforcedPromiseIsNotTrustedAfterTheMachineRestarted() throws Exception
    {
        final long end;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 20; i++)
            {
                append(log, 1, 1, payload(10, i, 100));
            }
            end = log.flush();
        }
        final Path file = dir.resolve(LogFormat.PROMISE_FILE);
        try (PromiseFile sameBoot = PromiseFile.open(file))
        {
            assertEquals(end, sameBoot.position(), "a process restart keeps the page cache, and the promise");
        }
        try (PromiseFile otherBoot = PromiseFile.open(file, UUID.randomUUID()))
        {
            assertEquals(PromiseFile.UNKNOWN, otherBoot.position(),
                "under NONE the page holding the promise may have reached the disk before the data it names");
        }
        // Forced promises (BATCH) are trusted across a machine restart.
        try (ArchiveLog log = ArchiveLog.open(config(dir).durability(DurabilityPolicy.BATCH)))
        {
            append(log, 1, 1, payload(10, 20, 100));
            log.flush();
        }
        try (PromiseFile otherBoot = PromiseFile.open(file, UUID.randomUUID()))
        {
            assertTrue(otherBoot.position() > end);
        }
    }

    @Test
    void aDamagedPromiseSlotFallsBackToTheOtherOne() throws Exception
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            append(log, 1, 1, payload(11, 0, 100));
            final long first = log.flush();
            append(log, 1, 1, payload(11, 1, 100));
            final long second = log.flush();
            assertTrue(second > first);
        }
        final Path file = dir.resolve(LogFormat.PROMISE_FILE);
        final long newest;
        try (PromiseFile promise = PromiseFile.open(file))
        {
            newest = promise.position();
        }
        // A power loss while the newest slot was written: whichever slot that was, the other one is read.
        for (int slot = 0; slot < 2; slot++)
        {
            final byte[] saved = Files.readAllBytes(file);
            flipByte(file, slot * PromiseFile.SLOT_STRIDE + 20);
            try (PromiseFile promise = PromiseFile.open(file))
            {
                assertTrue(promise.position() > 0 && promise.position() <= newest, "slot " + slot);
            }
            Files.write(file, saved);
        }
    }

    @Test
    void withoutAPromiseDamageFarFromTheTailIsCorruptionNamingFileAndPosition() throws Exception
    {
        final long victim;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            append(log, 1, 1, payload(6, 0, 100));
            victim = append(log, 1, 1, payload(6, 1, 100));
            for (int i = 2; i < 150; i++)
            {
                append(log, 1, 1, payload(6, i, 100));
            }
            log.flush();
            assertTrue(log.appendedPosition() - victim > 8 * 1024, "more than one batch after the damage");
        }
        // A log written before promises existed: the distance from the end is all recovery can go by.
        Files.delete(dir.resolve(LogFormat.PROMISE_FILE));
        flipByte(dir.resolve(SegmentFiles.name(0)), victim + 40);

        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason());
        assertEquals(victim, ex.position());
        assertEquals(dir.resolve(SegmentFiles.name(0)), ex.file());
        assertTrue(ex.getMessage().contains("checksum"), ex.getMessage());
    }

    @Test
    void readerStopsAtAFrameDamagedWhileTheLogIsOpen() throws Exception
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            for (int i = 0; i < 1000; i++)
            {
                append(log, 1, 1, payload(7, i, 200));
            }
            log.flush();
            flipByte(dir.resolve(SegmentFiles.name(0)), 5000);
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> readAll(log, 0));
            assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason());
            assertEquals(dir.resolve(SegmentFiles.name(0)), ex.file());
        }
    }

    @Test
    void newerFormatVersionIsRefused() throws Exception
    {
        ArchiveLog.open(config(dir)).close();
        LogDescriptorFile.write(dir.resolve(LogFormat.DESCRIPTOR_FILE), new LogDescriptorFile.Values(
            LogFormat.FORMAT_VERSION + 1, 64 * 1024, 8 * 1024, 0));
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.UNSUPPORTED_FORMAT, ex.reason());
        assertTrue(ex.getMessage().contains("format version 2"), ex.getMessage());
    }

    @Test
    void damagedDescriptorIsRefused() throws Exception
    {
        ArchiveLog.open(config(dir)).close();
        flipByte(dir.resolve(LogFormat.DESCRIPTOR_FILE), 13);
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.CORRUPT_DESCRIPTOR, ex.reason());
    }

    @Test
    void openingWithAnotherSegmentLengthIsAConfigMismatch()
    {
        ArchiveLog.open(config(dir)).close();
        final ArchiveException ex = assertThrows(ArchiveException.class,
            () -> ArchiveLog.open(config(dir).segmentLength(128 * 1024)));
        assertEquals(ArchiveException.Reason.CONFIG_MISMATCH, ex.reason());
    }

    @Test
    void segmentsWithoutDescriptorAreNotTakenForALog() throws Exception
    {
        fillSegments(3);
        Files.delete(dir.resolve(LogFormat.DESCRIPTOR_FILE));
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.UNSUPPORTED_FORMAT, ex.reason());
        assertTrue(Files.exists(dir.resolve(SegmentFiles.name(0))), "nothing deleted");
    }

    @Test
    void truncatedSegmentIsNamed() throws Exception
    {
        final int segments = fillSegments(3);
        final Path victim = dir.resolve(SegmentFiles.name(64 * 1024));
        try (RandomAccessFile file = new RandomAccessFile(victim.toFile(), "rw"))
        {
            file.setLength(1000);
        }
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.TRUNCATED_SEGMENT, ex.reason());
        assertEquals(victim, ex.file());
        assertEquals(segments, SegmentFiles.listBasePositions(dir).length, "nothing deleted");
    }

    @Test
    void missingSegmentInTheMiddleIsNamed() throws Exception
    {
        fillSegments(4);
        final Path victim = dir.resolve(SegmentFiles.name(64 * 1024));
        Files.delete(victim);
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> ArchiveLog.open(config(dir)));
        assertEquals(ArchiveException.Reason.MISSING_SEGMENT, ex.reason());
        assertEquals(victim, ex.file());
        final ArchiveException verify = assertThrows(ArchiveException.class, () -> ArchiveLog.verify(dir, null));
        assertEquals(ArchiveException.Reason.MISSING_SEGMENT, verify.reason());
    }

    /** Frames of 200 bytes, flushed: five segments' worth is 1,500. */
    private static void appendFrames(final ArchiveLog log, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            append(log, 1, 1, payload(11, i, 200));
        }
        log.flush();
    }

    @Test
    void purgeDeletesWholeSegmentsBelowAndReadersThereArePurged()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            appendFrames(log, 1000);
            final int before = SegmentFiles.listBasePositions(dir).length;
            final long start = log.purge(2 * log.segmentLength() + 100);
            assertEquals(2L * log.segmentLength(), start);
            assertEquals(before - 2, SegmentFiles.listBasePositions(dir).length);
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> log.newReader(0));
            assertEquals(ArchiveException.Reason.PURGED, ex.reason());
            assertFalse(readAll(log, start).isEmpty());

            final long end = log.appendedPosition();
            final long activeBase = end - end % log.segmentLength();
            assertEquals(activeBase, log.purge(Long.MAX_VALUE), "everything below the active segment goes");
            assertEquals(activeBase, SegmentFiles.listBasePositions(dir)[0], "the active segment stays");
            append(log, 1, 1, payload(11, 1000, 200));
            log.flush();
            assertFalse(readAll(log, activeBase).isEmpty());
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final long start = log.startPosition();
            assertTrue(start > 2L * log.segmentLength());
            assertEquals(start, SegmentFiles.listBasePositions(dir)[0], "the start survives reopening");
        }
    }

    @Test
    void aDeleterBehindTheStartDeletesOnlyUpToWhereItWasAsked()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            appendFrames(log, 1500);
            final int segment = log.segmentLength();
            final int before = SegmentFiles.listBasePositions(dir).length;
            assertTrue(before >= 5, "enough segments for the test: " + before);
            // Two purges moved the start; the deleter of the first has recorded (log.base) only up to 2 segments.
            log.advanceStart(2L * segment);
            log.advanceStart(4L * segment);
            assertEquals(2, log.deleteSegmentsBelow(2L * segment), "not past what the deleter recorded");
            assertEquals(2L * segment, SegmentFiles.listBasePositions(dir)[0]);
            assertEquals(2, log.deleteSegmentsBelow(10L * segment), "and never past the start");
            assertEquals(4L * segment, SegmentFiles.listBasePositions(dir)[0]);
        }
    }

    @Test
    void segmentsDeletedStepByStepLeaveNothingBehindAndTheRestReads() throws Exception
    {
        final long start;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            appendFrames(log, 1500);
            final int segment = log.segmentLength();
            final int before = SegmentFiles.listBasePositions(dir).length;
            start = log.advanceStart(3L * segment);
            assertEquals(3L * segment, start);
            final List<TestFrames.Frame> fromStart = readAll(log, start);
            assertEquals(3, log.deleteSegmentsBelow(start, 100_000));
            assertEquals(before - 3, SegmentFiles.listBasePositions(dir).length);
            assertEquals(start, SegmentFiles.listBasePositions(dir)[0]);
            try (var files = Files.list(dir))
            {
                assertTrue(files.noneMatch(f -> f.toString().endsWith(SegmentFiles.PURGING_SUFFIX)),
                    "nothing half done");
            }
            final List<TestFrames.Frame> after = readAll(log, start);
            assertEquals(fromStart.size(), after.size(), "every frame from the start on still reads");
            for (int i = 0; i < after.size(); i++)
            {
                assertEquals(fromStart.get(i).position(), after.get(i).position());
                assertArrayEquals(fromStart.get(i).payload(), after.get(i).payload());
            }
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertEquals(start, log.startPosition());
        }
    }

    @Test
    void aSegmentLeftHalfDeletedByACrashIsRemovedAtOpen() throws Exception
    {
        final long start;
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            appendFrames(log, 1500);
            start = log.purge(2L * log.segmentLength());
        }
        // What a crash in the middle of a step-by-step deletion leaves: the segment renamed and cut short.
        final Path halfDone = dir.resolve(SegmentFiles.name(start - 64 * 1024)
            .replace(SegmentFiles.SUFFIX, SegmentFiles.PURGING_SUFFIX));
        Files.write(halfDone, new byte[12_345]);
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertFalse(Files.exists(halfDone));
            assertEquals(start, log.startPosition());
            assertFalse(readAll(log, start).isEmpty());
        }
    }

    @Test
    void nonZeroInitialPositionStartsTheLogThere()
    {
        final long initial = 3 * 64 * 1024 + 4096;
        try (ArchiveLog log = ArchiveLog.open(config(dir).initialPosition(initial)))
        {
            assertEquals(initial, log.appendedPosition());
            append(log, 5, 1, payload(12, 0, 100));
            log.flush();
        }
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            assertEquals(initial, log.startPosition());
            final List<TestFrames.Frame> frames = readAll(log, initial);
            assertEquals(1, frames.size());
            assertEquals(initial, frames.get(0).position());
        }
    }

    @Test
    void replicatedBlocksProduceIdenticalFollowerLogs() throws Exception
    {
        final Path leaderDir = dir.resolve("leader");
        final Path followerDir = dir.resolve("follower");
        try (ArchiveLog leader = ArchiveLog.open(config(leaderDir));
            ArchiveLog follower = ArchiveLog.open(config(followerDir)))
        {
            for (int i = 0; i < 700; i++)
            {
                append(leader, 1 + i / 100, 1, payload(13, i, (i * 37) % 700));
            }
            leader.flush();
            try (LogReader reader = leader.newReader(0))
            {
                while (reader.readBlock((buffer, offset, length, start, end) ->
                {
                    assertEquals(start, follower.pendingPosition());
                    long result = follower.appendFrames(buffer, offset, length);
                    if (ArchiveLog.BACK_PRESSURED == result)
                    {
                        follower.flush();
                        result = follower.appendFrames(buffer, offset, length);
                    }
                    assertEquals(end, result);
                }, Long.MAX_VALUE, 3000) > 0)
                {
                }
            }
            follower.flush();
            assertEquals(leader.appendedPosition(), follower.appendedPosition());
            final long[] bases = SegmentFiles.listBasePositions(leaderDir);
            assertArrayEquals(bases, SegmentFiles.listBasePositions(followerDir));
            for (final long base : bases)
            {
                assertArrayEquals(Files.readAllBytes(leaderDir.resolve(SegmentFiles.name(base))),
                    Files.readAllBytes(followerDir.resolve(SegmentFiles.name(base))), "segment " + base);
            }
        }
    }

    @Test
    void replicatedGarbageIsRejectedWithoutTakingAnything()
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            final UnsafeBuffer garbage = new UnsafeBuffer(new byte[256]);
            garbage.putInt(0, 64);
            garbage.putInt(4, 12345);
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> log.appendFrames(garbage, 0, 64));
            assertEquals(ArchiveException.Reason.CORRUPT_FRAME, ex.reason());

            final UnsafeBuffer truncated = new UnsafeBuffer(new byte[16]);
            truncated.putInt(0, 64);
            assertThrows(ArchiveException.class, () -> log.appendFrames(truncated, 0, 16));
            assertEquals(0, log.pendingPosition(), "nothing taken");
        }
    }

    @Test
    void misplacedReplicatedFrameIsRejected() throws Exception
    {
        final Path leaderDir = dir.resolve("leader");
        try (ArchiveLog leader = ArchiveLog.open(config(leaderDir));
            ArchiveLog follower = ArchiveLog.open(config(dir.resolve("follower"))))
        {
            append(leader, 1, 1, payload(14, 0, 100));
            append(leader, 1, 1, payload(14, 1, 100));
            leader.flush();
            final byte[] segment = Files.readAllBytes(leaderDir.resolve(SegmentFiles.name(0)));
            final int second = FrameDescriptor.alignedFrameLength(100);
            final UnsafeBuffer src = new UnsafeBuffer(segment);
            final ArchiveException ex = assertThrows(ArchiveException.class,
                () -> follower.appendFrames(src, second, second));
            assertTrue(ex.getMessage().contains("position"), ex.getMessage());
        }
    }

    private int fillSegments(final int segments)
    {
        try (ArchiveLog log = ArchiveLog.open(config(dir)))
        {
            int i = 0;
            while (log.pendingPosition() < (long)(segments - 1) * log.segmentLength() + 100)
            {
                append(log, 1, 1, payload(15, i++, 500));
            }
            log.flush();
        }
        return SegmentFiles.listBasePositions(dir).length;
    }

    static void flipByte(final Path file, final long offset) throws Exception
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(offset);
            final int b = raf.read();
            raf.seek(offset);
            raf.write(b ^ 0x10);
        }
    }
}
