package io.lockstep.consensus.storage;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.RecordingLog;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FileSnapshotStorageTest
{
    @TempDir
    Path dir;

    @Test
    void aWrittenSnapshotIsRecordedOnlyWhenDurableAndLoadsBackTheSameFragments() throws Exception
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            assertEquals(-1, storage.durablePosition());
            assertNull(storage.loadLatest());
            final SnapshotImage image = image(4096, 3, 1000);
            storage.write(image);
            awaitDurable(storage, 4096);
            assertEquals(3, storage.durableTerm());
            final SnapshotStorage.Loaded loaded = storage.loadLatest();
            assertEquals(4096, loaded.image().logPosition());
            assertEquals(fragments(image), fragments(loaded.image()));
        }
        try (FileSnapshotStorage reopened = new FileSnapshotStorage(dir))
        {
            assertEquals(4096, reopened.durablePosition(), "a restart finds it through the recording log");
        }
    }

    @Test
    void aDelayedWriteWaitsAndClosingWritesItAtOnce() throws Exception
    {
        final FileSnapshotStorage storage = new FileSnapshotStorage(dir, TimeUnit.HOURS.toNanos(1));
        final long startNs;
        try
        {
            storage.write(image(4096, 3, 1000));
            assertTrue(storage.isWriting(), "handed to the writer thread, which waits");
            assertEquals(-1, storage.durablePosition());
            assertEquals(0, RecordingLog.open(dir).entries().size(), "nothing recorded while it waits");
        }
        finally
        {
            startNs = System.nanoTime();
            storage.close();
        }
        assertTrue(System.nanoTime() - startNs < TimeUnit.MINUTES.toNanos(1), "close did not wait out the hour");
        assertEquals(4096, storage.durablePosition(), "closing ends the wait: the snapshot is written, not lost");
        try (FileSnapshotStorage reopened = new FileSnapshotStorage(dir))
        {
            assertEquals(4096, reopened.durablePosition());
        }
        assertThrows(IllegalArgumentException.class, () -> new FileSnapshotStorage(dir, -1));
    }

    @Test
    void aDelayedWriteIsWrittenWhenTheDelayRunsOutOrWhenSomeoneWaitsForIt() throws Exception
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir, TimeUnit.MILLISECONDS.toNanos(50)))
        {
            storage.write(image(4096, 3, 1000));
            awaitDurable(storage, 4096);
        }
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir, TimeUnit.HOURS.toNanos(1)))
        {
            storage.write(image(8192, 3, 1000));
            assertTrue(storage.isWriting());
            storage.expedite();
            awaitDurable(storage, 8192);
            storage.expedite(); // nothing under way: not for the next write
            storage.write(image(12288, 3, 1000));
            assertTrue(storage.isWriting(), "the next one waits again: expedite was for the one under way");
            assertEquals(8192, storage.durablePosition());
        }
    }

    @Test
    void aDamagedNewestSnapshotIsReportedSetAsideAndTheOneBeforeIsUsed() throws Exception
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            storage.write(image(4096, 1, 500));
            awaitDurable(storage, 4096);
            storage.write(image(8192, 1, 500));
            awaitDurable(storage, 8192);
        }
        final Path newest = snapshotFile("snapshot-8192-");
        final byte[] bytes = Files.readAllBytes(newest);
        bytes[bytes.length / 2] ^= 0x01;
        Files.write(newest, bytes);

        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            final SnapshotStorage.Loaded loaded = storage.loadLatest();
            assertEquals(4096, loaded.image().logPosition());
            assertEquals(4096, storage.durablePosition(), "the damaged one no longer counts");
            assertTrue(Files.exists(Path.of(newest + ".damaged")), "kept, renamed, for whoever investigates");
            assertEquals(1, RecordingLog.open(dir).entries().size(), "and no longer recorded");
        }
    }

    @Test
    void snapshotFilesLeftUnrecordedByACrashAreRemovedOnOpen() throws Exception
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            storage.write(image(4096, 1, 100));
            awaitDurable(storage, 4096);
        }
        final Path recorded = snapshotFile("snapshot-4096-");
        final Path orphan = recorded.resolveSibling("snapshot-9999-0-1.snap");
        final Path partial = recorded.resolveSibling("snapshot-7777-0-1.snap.tmp");
        Files.copy(recorded, orphan);
        Files.write(partial, new byte[100]);
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            assertFalse(Files.exists(orphan));
            assertFalse(Files.exists(partial));
            assertEquals(4096, storage.durablePosition());
        }
    }

    @Test
    void aSnapshotStreamedInChunksInstallsAndADamagedOneIsRefused() throws Exception
    {
        final Path leaderDir = dir.resolve("leader");
        try (FileSnapshotStorage leader = new FileSnapshotStorage(leaderDir);
            FileSnapshotStorage follower = new FileSnapshotStorage(dir.resolve("follower")))
        {
            final SnapshotImage image = image(65536, 7, 20_000);
            leader.write(image);
            awaitDurable(leader, 65536);
            final long length = leader.durableLength();

            stream(leader, follower, length, -1);
            final SnapshotStorage.Loaded installed = follower.completeInstall();
            assertEquals(fragments(image), fragments(installed.image()));
            assertEquals(65536, follower.durablePosition());

            final FileSnapshotStorage second = new FileSnapshotStorage(dir.resolve("second"));
            stream(leader, second, length, length / 3);
            final ArchiveException ex = assertThrows(ArchiveException.class, second::completeInstall);
            assertEquals(ArchiveException.Reason.CORRUPT_SNAPSHOT, ex.reason());
            assertEquals(-1, second.durablePosition(), "nothing recorded");
            second.close();
        }
    }

    @Test
    void aSnapshotInstalledAtAPositionAlreadyRecordedIsRefusedAndTheRecordedOneKept() throws Exception
    {
        try (FileSnapshotStorage leader = new FileSnapshotStorage(dir.resolve("leader"));
            FileSnapshotStorage follower = new FileSnapshotStorage(dir.resolve("follower")))
        {
            leader.write(image(8192, 3, 100));
            awaitDurable(leader, 8192);
            follower.write(image(8192, 3, 100)); // the follower's own, at the same entry
            awaitDurable(follower, 8192);

            stream(leader, follower, leader.durableLength(), -1);
            final IllegalStateException ex = assertThrows(IllegalStateException.class, follower::completeInstall);
            assertTrue(ex.getMessage().contains("log order"), ex.getMessage());
            follower.retain(1);
            assertEquals(8192, follower.durablePosition());
            assertEquals(8192, follower.loadLatest().image().logPosition(), "its own snapshot is still there");
        }
    }

    @Test
    void anAbortedInstallLeavesNoPartialFileAndChangesNothingRecorded() throws Exception
    {
        final Path followerDir = dir.resolve("follower");
        try (FileSnapshotStorage leader = new FileSnapshotStorage(dir.resolve("leader"));
            FileSnapshotStorage follower = new FileSnapshotStorage(followerDir))
        {
            leader.write(image(16384, 3, 20_000));
            awaitDurable(leader, 16384);
            follower.write(image(8192, 3, 100));
            awaitDurable(follower, 8192);
            final long length = leader.durableLength();
            follower.beginInstall(16384, 3, length);
            final UnsafeBuffer chunk = new UnsafeBuffer(new byte[4096]);
            follower.installChunk(chunk, 0, leader.read(16384, 0, chunk, 0, chunk.capacity()));
            final Path partial = followerDir.resolve("snapshots").resolve("install.tmp");
            assertTrue(Files.exists(partial), "half received");

            follower.abortInstall();
            assertFalse(Files.exists(partial), "the partial file is gone, not left open");
            assertEquals(8192, follower.durablePosition(), "nothing recorded changed");

            stream(leader, follower, length, -1);
            assertEquals(16384, follower.completeInstall().image().logPosition(), "a later install still works");
        }
    }

    @Test
    void retainKeepsTheNewestAndDeletesTheRestOffTheCallersThread() throws Exception
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            for (int i = 1; i <= 4; i++)
            {
                storage.write(image(4096L * i, 1, 10));
                awaitDurable(storage, 4096L * i);
            }
            assertEquals(8192 + 4096, storage.retain(2), "oldest kept");
            awaitTrue(() -> countSnapshotFiles() <= 2, "old snapshots deleted");
            assertEquals(2, RecordingLog.open(dir).entries().size());
        }
    }

    private static void stream(
        final FileSnapshotStorage from, final FileSnapshotStorage to, final long length, final long flipAt)
    {
        to.beginInstall(from.durablePosition(), from.durableTerm(), length);
        final UnsafeBuffer chunk = new UnsafeBuffer(new byte[16 * 1024]);
        for (long offset = 0; offset < length; )
        {
            final int read = from.read(from.durablePosition(), offset, chunk, 0, chunk.capacity());
            assertTrue(read > 0);
            if (flipAt >= offset && flipAt < offset + read)
            {
                final int at = (int)(flipAt - offset);
                chunk.putByte(at, (byte)(chunk.getByte(at) ^ 0x40));
            }
            to.installChunk(chunk, 0, read);
            offset += read;
        }
    }

    private static SnapshotImage image(final long position, final long term, final int fragments)
    {
        final SnapshotImage image = new SnapshotImage(position, term, position * 10, 1024);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[200]);
        for (int i = 0; i < fragments; i++)
        {
            buffer.putLong(0, position * 31 + i);
            image.append(buffer, 0, 8 + i % 190);
        }
        return image;
    }

    private static List<String> fragments(final SnapshotImage image)
    {
        final List<String> result = new ArrayList<>();
        image.forEachFragment((buffer, offset, length) ->
        {
            final byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            result.add(Arrays.toString(bytes));
        });
        return result;
    }

    private static void awaitDurable(final FileSnapshotStorage storage, final long position) throws Exception
    {
        awaitTrue(() -> storage.durablePosition() == position && !storage.isWriting(),
            "snapshot at " + position + " durable");
    }

    /** A condition another thread makes true: polled until it holds, for at most 10 s. */
    private interface Condition
    {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(final Condition condition, final String what) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.holds())
        {
            assertFalse(System.nanoTime() > deadline, what + " within 10 s");
            Thread.yield(); // the store's own threads make it true: give them the core
        }
    }

    private Path snapshotFile(final String prefix) throws Exception
    {
        try (Stream<Path> files = Files.list(dir.resolve("snapshots")))
        {
            return files.filter(p -> p.getFileName().toString().startsWith(prefix) &&
                p.getFileName().toString().endsWith(".snap")).findFirst().orElseThrow();
        }
    }

    private long countSnapshotFiles() throws Exception
    {
        try (Stream<Path> files = Files.list(dir.resolve("snapshots")))
        {
            return files.filter(p -> p.getFileName().toString().endsWith(".snap")).count();
        }
    }

}
