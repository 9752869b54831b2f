package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Frames whose content is a pure function of (seed, index), so any reader can check what it got without being told.
 */
final class TestFrames
{
    record Frame(long position, long term, int type, byte[] payload)
    {
    }

    private TestFrames()
    {
    }

    static byte[] payload(final long seed, final long index, final int length)
    {
        final byte[] bytes = new byte[length];
        long x = seed * 0x9E3779B97F4A7C15L + index;
        for (int i = 0; i < length; i++)
        {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            bytes[i] = (byte)x;
        }
        return bytes;
    }

    static int lengthFor(final long seed, final long index, final int maxLength)
    {
        final long mix = (seed + 31 * index) * 0x9E3779B97F4A7C15L;
        return (int)Math.floorMod(mix >>> 17, (long)maxLength + 1);
    }

    static ArchiveLogConfig config(final Path dir)
    {
        return new ArchiveLogConfig().directory(dir).segmentLength(64 * 1024).maxBatchLength(8 * 1024);
    }

    /** Append one frame, flushing first if the batch is full. */
    static long append(final ArchiveLog log, final long term, final int type, final byte[] payload)
    {
        final UnsafeBuffer src = new UnsafeBuffer(payload);
        long result = log.append(term, type, src, 0, payload.length);
        if (ArchiveLog.BACK_PRESSURED == result)
        {
            log.flush();
            result = log.append(term, type, src, 0, payload.length);
        }
        if (result < 0)
        {
            throw new IllegalStateException("append failed: " + result);
        }
        return result;
    }

    static List<Frame> readAll(final ArchiveLog log, final long from)
    {
        final List<Frame> frames = new ArrayList<>();
        try (LogReader reader = log.newReader(from))
        {
            while (reader.poll((buffer, offset, length, position, term, type) ->
                frames.add(new Frame(position, term, type, bytes(buffer, offset, length))), Long.MAX_VALUE, 100) > 0)
            {
            }
        }
        return frames;
    }

    static byte[] bytes(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return bytes;
    }
}
