package io.lockstep.archive;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.lockstep.archive.TestFrames.payload;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SnapshotStoreTest
{
    @TempDir
    Path dir;

    @Test
    void fragmentsReadBackInOrderAfterCompletion()
    {
        final SnapshotStore store = SnapshotStore.open(dir, 4096);
        final SnapshotInfo info;
        try (SnapshotFileWriter writer = store.newSnapshot(3, 7, 123_456, 99))
        {
            for (int i = 0; i < 100; i++)
            {
                final byte[] p = payload(20, i, TestFrames.lengthFor(20, i, 4096));
                writer.append(new UnsafeBuffer(p), 0, p.length);
            }
            assertTrue(store.list().isEmpty(), "not visible before completion");
            info = writer.complete();
        }
        assertEquals(List.of(info.location()), store.list().stream().map(SnapshotInfo::location).toList());

        final List<byte[]> read = new ArrayList<>();
        try (SnapshotFileReader reader = store.openReader(info.location()))
        {
            assertEquals(3, reader.info().serviceId());
            assertEquals(7, reader.info().term());
            assertEquals(123_456, reader.info().logPosition());
            assertEquals(99, reader.info().timestamp());
            while (!reader.isDone())
            {
                reader.poll((buffer, offset, length) -> read.add(TestFrames.bytes(buffer, offset, length)), 7);
            }
        }
        assertEquals(100, read.size());
        for (int i = 0; i < 100; i++)
        {
            assertArrayEquals(payload(20, i, TestFrames.lengthFor(20, i, 4096)), read.get(i));
        }
    }

    @Test
    void abandonedSnapshotLeavesNothingBehind() throws Exception
    {
        final SnapshotStore store = SnapshotStore.open(dir, 4096);
        try (SnapshotFileWriter writer = store.newSnapshot(0, 1, 64, 0))
        {
            writer.append(new UnsafeBuffer(new byte[100]), 0, 100);
        }
        assertTrue(store.list().isEmpty());
        try (var files = Files.list(dir))
        {
            assertEquals(0, files.count());
        }
    }

    @Test
    void everyDamagedByteIsDetectedOnRead() throws Exception
    {
        final SnapshotStore store = SnapshotStore.open(dir, 1024);
        final SnapshotInfo info;
        try (SnapshotFileWriter writer = store.newSnapshot(0, 1, 64, 0))
        {
            for (int i = 0; i < 5; i++)
            {
                writer.append(new UnsafeBuffer(payload(21, i, 200)), 0, 200);
            }
            info = writer.complete();
        }
        final Path file = dir.resolve(info.location());
        final byte[] original = Files.readAllBytes(file);
        for (int offset = 0; offset < original.length; offset++)
        {
            ArchiveLogTest.flipByte(file, offset);
            final int at = offset;
            final ArchiveException ex = assertThrows(ArchiveException.class, () -> store.verify(info.location()),
                "flip at " + at);
            assertEquals(ArchiveException.Reason.CORRUPT_SNAPSHOT, ex.reason(), ex.getMessage());
            Files.write(file, original);
        }
        assertEquals(info.logPosition(), store.verify(info.location()).logPosition());
    }

    @Test
    void truncatedSnapshotIsCorrupt() throws Exception
    {
        final SnapshotStore store = SnapshotStore.open(dir, 1024);
        final SnapshotInfo info;
        try (SnapshotFileWriter writer = store.newSnapshot(0, 1, 64, 0))
        {
            writer.append(new UnsafeBuffer(new byte[500]), 0, 500);
            info = writer.complete();
        }
        final Path file = dir.resolve(info.location());
        final byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 64));
        final ArchiveException ex = assertThrows(ArchiveException.class, () -> store.verify(info.location()));
        assertEquals(ArchiveException.Reason.CORRUPT_SNAPSHOT, ex.reason());
        assertTrue(ex.getMessage().contains("trailer"), ex.getMessage());
    }
}
