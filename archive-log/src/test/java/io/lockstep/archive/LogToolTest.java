package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogToolTest
{
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    void verifyReportsAWholeLogAndExitsZero()
    {
        writeFrames(50);
        assertEquals(0, run("verify", dir.toString()));
        assertTrue(out().contains("log status=ok"), out());
        assertTrue(out().contains("frames=50"), out());
    }

    @Test
    void verifyNamesDamageBelowThePromiseAndExitsOne() throws Exception
    {
        writeFrames(2000);
        ArchiveLogTest.flipByte(dir.resolve(SegmentFiles.name(0)), 1000);
        assertEquals(1, run("verify", dir.toString()));
        assertTrue(out().contains("log status=damaged"), out());
        assertTrue(out().contains("damaged file=" + dir.resolve(SegmentFiles.name(0))), out());
        assertTrue(out().contains("position=960 "), out());
        assertTrue(out().contains("reason=\"checksum mismatch"), out());
    }

    @Test
    void verifyWithoutAPromiseNamesTheCorruptionAndExitsOne() throws Exception
    {
        writeFrames(2000);
        Files.delete(dir.resolve(LogFormat.PROMISE_FILE));
        ArchiveLogTest.flipByte(dir.resolve(SegmentFiles.name(0)), 1000);
        assertEquals(1, run("verify", dir.toString()));
        assertTrue(out().contains("status=error"), out());
        assertTrue(out().contains("reason=CORRUPT_FRAME"), out());
        assertTrue(out().contains(SegmentFiles.name(0)), out());
    }

    @Test
    void describeListsTheRecordingLog()
    {
        writeFrames(1);
        RecordingLog.open(dir).appendTerm(3, 0, 1, 42);
        assertEquals(0, run("describe", dir.toString()));
        assertTrue(out().contains("recording type=TERM term=3 position=0 leader=1"), out());
    }

    @Test
    void aLostPromiseBesideABatchLogIsReportedAtOpenAndByVerify() throws Exception
    {
        writeFrames(20);
        final Path promise = dir.resolve(LogFormat.PROMISE_FILE);
        assertEquals(0, run("verify", dir.toString()));
        assertTrue(out().contains(" promise=ok"), out());
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals(null, log.promiseLost(), "a promise as it should be");
        }

        Files.delete(promise);
        out.reset();
        assertEquals(0, run("verify", dir.toString()));
        assertTrue(out().contains(" promise=missing"), out());
        assertTrue(new String(err.toByteArray(), StandardCharsets.UTF_8).contains("log.promise is missing beside a " +
            "log of"), new String(err.toByteArray(), StandardCharsets.UTF_8));
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals("missing", log.promiseLost(), "said at open, not silently recreated");
        }
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals("missing", log.promiseLost(), "the new promise looks whole, but the loss is remembered");
        }
        out.reset();
        assertEquals(0, run("verify", dir.toString()));
        assertTrue(out().contains(" promise=lost_earlier"), out());
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            log.promiseKeptAgain();
            assertEquals(null, log.promiseLost(),
                "kept again once the member durably holds a later leader's committed log");
        }
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals(null, log.promiseLost(), "and across the next start");
        }

        Files.delete(promise);
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir)))
        {
            assertEquals(null, log.promiseLost(), "under none durability a promise may be gone after a restart");
        }
        Files.write(promise, new byte[1024]);
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals("untrusted", log.promiseLost(), "a zeroed promise holds nothing");
        }
        Files.write(dir.resolve(PromiseLoss.FILE_NAME), new byte[0]);
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).durability(DurabilityPolicy.BATCH)))
        {
            assertEquals("untrusted", log.promiseLost(), "a mark cut short by a crash still marks the loss");
        }
    }

    @Test
    void wrongUsageExitsTwo()
    {
        assertEquals(2, run("verify", dir.resolve("missing").toString()));
        assertTrue(new String(err.toByteArray(), StandardCharsets.UTF_8).contains("no such directory"));
        assertEquals(2, run("frobnicate", dir.toString()));
    }

    private void writeFrames(final int count)
    {
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir)))
        {
            for (int i = 0; i < count; i++)
            {
                TestFrames.append(log, 1, 1, TestFrames.payload(30, i, 100));
            }
            log.flush();
        }
    }

    private int run(final String... args)
    {
        return LogTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out()
    {
        return out.toString(StandardCharsets.UTF_8);
    }
}
