package io.lockstep.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The one segment file the log's writer has open: opened, or created full-length, when the writer reaches it;
 * forced when the writer leaves it for good (under {@code NONE} by the background sync, which {@code sync()} waits
 * for), so that forcing the current segment and the ones left is all a sync needs; handed to the background sync
 * under {@code NONE}. Writer thread only.
 */
final class SegmentChannel
{
    private static final System.Logger LOGGER = System.getLogger(SegmentChannel.class.getName());

    private final Path directory;
    private final int segmentLength;
    private final boolean syncCreation;
    private final BackgroundSync backgroundSync;
    private FileChannel channel;
    private long basePosition = -1;

    /**
     * @param syncCreation   true to make a new segment's creation durable (under {@code BATCH}).
     * @param backgroundSync forces the current segment now and then under {@code NONE}, or null.
     */
    SegmentChannel(
        final Path directory, final int segmentLength, final boolean syncCreation, final BackgroundSync backgroundSync)
    {
        this.directory = directory;
        this.segmentLength = segmentLength;
        this.syncCreation = syncCreation;
        this.backgroundSync = backgroundSync;
    }

    /**
     * Make the segment starting at a position the open one.
     *
     * @throws ArchiveException if the segment left behind cannot be forced, or the new one opened.
     */
    void use(final long segmentBasePosition)
    {
        if (basePosition == segmentBasePosition)
        {
            return;
        }
        if (null != channel && segmentBasePosition > basePosition)
        {
            // Leaving a segment for good: force it, so that sync() (which forces only the current segment) makes
            // everything durable under NONE too. One fdatasync per segment; BATCH has forced it already. Under
            // NONE the background thread does it (and sync() waits for it), not this one.
            if (null != backgroundSync)
            {
                backgroundSync.throwIfFailed();
                backgroundSync.target(null);
                backgroundSync.retire(channel, SegmentFiles.segmentFile(directory, basePosition));
                channel = null;
                basePosition = -1;
            }
            else
            {
                force();
            }
        }
        close();
        final Path file = SegmentFiles.segmentFile(directory, segmentBasePosition);
        channel = Files.exists(file) ?
            SegmentFiles.openForWrite(file) :
            SegmentFiles.create(directory, segmentBasePosition, segmentLength, syncCreation);
        basePosition = segmentBasePosition;
        if (null != backgroundSync)
        {
            backgroundSync.target(channel);
        }
    }

    /**
     * Write all of a buffer's remaining bytes at an offset of the open segment.
     */
    void write(final ByteBuffer bytes, final long fileOffset) throws IOException
    {
        long filePosition = fileOffset;
        while (bytes.hasRemaining())
        {
            filePosition += channel.write(bytes, filePosition);
        }
    }

    /**
     * Zero {@code [from, to)} of the open segment.
     */
    void zero(final long from, final long to)
    {
        SegmentFiles.zero(channel, SegmentFiles.segmentFile(directory, basePosition), from, to);
    }

    /**
     * {@code fdatasync} the open segment, if any.
     *
     * @throws ArchiveException naming the segment if it fails.
     */
    void force()
    {
        if (null == channel)
        {
            return;
        }
        try
        {
            channel.force(false);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(SegmentFiles.segmentFile(directory, basePosition), "fsync failed", ex);
        }
    }

    /** @return the open segment's file, or null: for the sync thread under {@code BATCH} ({@link LogSync}). */
    FileChannel channel()
    {
        return channel;
    }

    /**
     * @return the base position of the open segment, or -1.
     */
    long basePosition()
    {
        return basePosition;
    }

    void close()
    {
        if (null != channel)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ex)
            {
                LOGGER.log(System.Logger.Level.WARNING, "closing segment failed", ex);
            }
            channel = null;
            basePosition = -1;
        }
    }
}
