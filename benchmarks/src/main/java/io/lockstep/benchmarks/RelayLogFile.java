package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What a durable relay process does with the bytes it passes on, and nothing more: append them to a sparse file
 * (blocks allocated as written, as a member's log segment) and make them durable before they count. One sync
 * ({@code fdatasync}) is the least any cluster that acknowledges only what is on disk pays per round; two add a
 * second small file forced after the data, as a member's promise of how far it may acknowledge (one page, mapped,
 * {@code msync}).
 */
final class RelayLogFile implements AutoCloseable
{
    /** Longer than any run appends (20k msg/s of 288 bytes for 60 s is 346 MB); a longer run wraps to the start. */
    private static final long LENGTH = 1L << 30;
    private static final int PAGE = 4096;

    private final FileChannel data;
    private final FileChannel promiseChannel;
    private final MappedByteBuffer promise;
    /** Where the next append goes in the data file. */
    private long offset;
    /** Bytes appended since the file was made, across wraps. */
    private long appended;

    /**
     * @param dir   where the files go (created by the caller, deleted by it).
     * @param name  a name unique among the relay's processes.
     * @param keepPromise true to keep a promise: two syncs per round (the data, then the promise), else one.
     */
    RelayLogFile(final Path dir, final String name, final boolean keepPromise) throws IOException
    {
        data = FileChannel.open(dir.resolve(name + ".log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE);
        data.write(ByteBuffer.allocate(1), LENGTH - 1); // sparse: the length, no blocks
        if (keepPromise)
        {
            promiseChannel = FileChannel.open(dir.resolve(name + ".promise"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
            this.promise = promiseChannel.map(FileChannel.MapMode.READ_WRITE, 0, PAGE);
        }
        else
        {
            promiseChannel = null;
            this.promise = null;
        }
    }

    /**
     * Append what remains in the buffer (consumed), then make it durable: the data, then the promise if kept.
     *
     * @return every byte appended so far, all of them durable.
     */
    long appendDurably(final ByteBuffer bytes) throws IOException
    {
        final long appended = append(bytes);
        sync(appended);
        return appended;
    }

    /**
     * Append what remains in the buffer (consumed), not yet durable. One thread appends.
     *
     * @return every byte appended so far.
     */
    long append(final ByteBuffer bytes) throws IOException
    {
        final int length = bytes.remaining();
        if (offset + length > LENGTH)
        {
            offset = 0;
        }
        while (bytes.hasRemaining())
        {
            data.write(bytes, offset + (length - bytes.remaining()));
        }
        offset += length;
        appended += length;
        return appended;
    }

    /**
     * Make what was appended durable, then the promise that it is (if kept). One thread syncs; it may be another
     * than the one that appends, as a member's log syncs on a thread of its own while the member goes on.
     *
     * @param upTo what an {@link #append} returned before this call: the promise records it.
     */
    void sync(final long upTo) throws IOException
    {
        data.force(false);
        if (null != promise)
        {
            promise.putLong(0, upTo);
            promise.force();
        }
    }

    /** @return what the promise file holds: the durable byte count it last recorded (0 without a promise). */
    static long promised(final Path dir, final String name) throws IOException
    {
        try (FileChannel channel = FileChannel.open(dir.resolve(name + ".promise"), StandardOpenOption.READ))
        {
            final ByteBuffer value = ByteBuffer.allocate(Long.BYTES);
            while (value.hasRemaining() && channel.read(value, value.position()) > 0)
            {
                continue;
            }
            return value.flip().remaining() == Long.BYTES ? value.getLong(0) : 0;
        }
    }

    public void close() throws IOException
    {
        data.close();
        if (null != promiseChannel)
        {
            promiseChannel.close();
        }
    }
}
