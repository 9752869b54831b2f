package io.lockstep.archive;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A reader on another thread tails the log while the writer appends: it must see every frame, whole and in order,
 * and never anything beyond the published position.
 */
class ConcurrentReaderTest
{
    private static final int FRAMES = 100_000;

    @TempDir
    Path dir;

    @Test
    void readerOnAnotherThreadSeesEveryFrameWholeAndInOrder() throws Exception
    {
        try (ArchiveLog log = ArchiveLog.open(TestFrames.config(dir).segmentLength(256 * 1024)))
        {
            final AtomicLong read = new AtomicLong();
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread readerThread = new Thread(() ->
            {
                final byte[] expected = new byte[64];
                try (LogReader reader = log.newReader(0))
                {
                    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (read.get() < FRAMES && System.nanoTime() < deadline)
                    {
                        reader.poll((buffer, offset, length, position, term, type) ->
                        {
                            final long index = read.get();
                            final int expectedLength = (int)(index % 64);
                            if (length != expectedLength || type != (int)(index % 1000) ||
                                position + FrameDescriptor.alignedFrameLength(length) > log.publishedPosition())
                            {
                                throw new AssertionError("frame " + index + " wrong: length=" + length + " type="
                                    + type);
                            }
                            for (int i = 0; i < length; i++)
                            {
                                expected[i] = (byte)(index + i);
                                if (buffer.getByte(offset + i) != expected[i])
                                {
                                    throw new AssertionError("frame " + index + " byte " + i + " wrong");
                                }
                            }
                            read.incrementAndGet();
                        }, Long.MAX_VALUE, 64);
                        Thread.onSpinWait();
                    }
                }
                catch (final Throwable t)
                {
                    failure.set(t);
                }
            }, "log-reader");
            readerThread.start();

            final UnsafeBuffer src = new UnsafeBuffer(new byte[64]);
            for (int index = 0; index < FRAMES; index++)
            {
                final int length = index % 64;
                for (int i = 0; i < length; i++)
                {
                    src.putByte(i, (byte)(index + i));
                }
                while (ArchiveLog.BACK_PRESSURED == log.append(1, index % 1000, src, 0, length))
                {
                    log.flush();
                }
                if (index % 37 == 0)
                {
                    log.flush();
                }
            }
            log.flush();

            readerThread.join(TimeUnit.SECONDS.toMillis(90));
            assertTrue(!readerThread.isAlive(), "reader finished in time");
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            assertEquals(FRAMES, read.get());
        }
    }
}
