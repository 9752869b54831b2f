package io.lockstep.archive;

import io.lockstep.archive.codecs.MessageHeaderEncoder;
import io.lockstep.archive.codecs.SnapshotHeaderEncoder;
import io.lockstep.archive.codecs.SnapshotTrailerEncoder;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

import static io.lockstep.archive.FrameDescriptor.CHECKSUM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.POSITION_OFFSET;
import static io.lockstep.archive.FrameDescriptor.RESERVED_OFFSET;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_FRAGMENT_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_HEADER_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_TRAILER_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static io.lockstep.archive.FrameDescriptor.alignedFrameLength;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Writes one snapshot as a stream of fragments. Each fragment becomes a checksummed frame whose position is its
 * offset in the file. {@link #complete()} adds a trailer (fragment count and bytes), makes the file durable and only
 * then renames it into the store; closing without completing deletes the partial file.
 */
public final class SnapshotFileWriter implements AutoCloseable
{
    private final Path directory;
    private final Path tmpFile;
    private final String location;
    private final int maxFragmentLength;
    private final int serviceId;
    private final long term;
    private final long logPosition;
    private final long timestamp;
    private final FileChannel channel;
    private final ByteBuffer byteBuffer;
    private final UnsafeBuffer buffer;
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[64]);
    private final FrameChecksum checksum = new FrameChecksum();
    private int bufferLength;
    private long fileOffset;
    private long fragmentCount;
    private long payloadLength;
    private boolean done;

    SnapshotFileWriter(
        final Path directory,
        final String location,
        final int maxFragmentLength,
        final int serviceId,
        final long term,
        final long logPosition,
        final long timestamp)
    {
        this.directory = directory;
        this.location = location;
        this.tmpFile = directory.resolve(location + SnapshotStore.TMP_SUFFIX);
        this.maxFragmentLength = maxFragmentLength;
        this.serviceId = serviceId;
        this.term = term;
        this.logPosition = logPosition;
        this.timestamp = timestamp;
        this.byteBuffer = BufferUtil.allocateDirectAligned(
            alignedFrameLength(maxFragmentLength), FrameDescriptor.FRAME_ALIGNMENT);
        this.buffer = new UnsafeBuffer(byteBuffer);
        try
        {
            channel = FileChannel.open(
                tmpFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(tmpFile, "cannot create snapshot", ex);
        }

        final SnapshotHeaderEncoder header = new SnapshotHeaderEncoder()
            .wrapAndApplyHeader(scratch, 0, new MessageHeaderEncoder())
            .formatVersion(LogFormat.FORMAT_VERSION)
            .serviceId(serviceId)
            .term(term)
            .logPosition(logPosition)
            .timestamp(timestamp);
        appendFrame(SNAPSHOT_HEADER_FRAME_TYPE, scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH
            + header.encodedLength());
    }

    /**
     * Add one fragment.
     *
     * @param src    holding the fragment.
     * @param offset index of the fragment.
     * @param length length of the fragment, at most the store's fragment bound.
     */
    public void append(final DirectBuffer src, final int offset, final int length)
    {
        if (done)
        {
            throw new IllegalStateException("snapshot already completed or closed: " + location);
        }
        if (length < 0 || length > maxFragmentLength)
        {
            throw new IllegalArgumentException("fragment length " + length + " not in [0, " + maxFragmentLength + "]");
        }
        appendFrame(SNAPSHOT_FRAGMENT_FRAME_TYPE, src, offset, length);
        fragmentCount++;
        payloadLength += length;
    }

    /**
     * @return the largest fragment {@link #append} takes.
     */
    public int maxFragmentLength()
    {
        return maxFragmentLength;
    }

    /**
     * Finish the snapshot: trailer, fsync, rename into the store, fsync of the directory.
     *
     * @return the snapshot, now listed by the store.
     */
    public SnapshotInfo complete()
    {
        if (done)
        {
            throw new IllegalStateException("snapshot already completed or closed: " + location);
        }
        final SnapshotTrailerEncoder trailer = new SnapshotTrailerEncoder()
            .wrapAndApplyHeader(scratch, 0, new MessageHeaderEncoder())
            .fragmentCount(fragmentCount)
            .payloadLength(payloadLength);
        appendFrame(SNAPSHOT_TRAILER_FRAME_TYPE, scratch, 0, MessageHeaderEncoder.ENCODED_LENGTH
            + trailer.encodedLength());
        final Path file = directory.resolve(location);
        try
        {
            writeBuffer();
            channel.force(true);
            channel.close();
            Files.move(tmpFile, file, StandardCopyOption.ATOMIC_MOVE);
            SegmentFiles.fsyncDirectory(directory);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot complete snapshot", ex);
        }
        finally
        {
            done = true;
        }
        return new SnapshotInfo(location, serviceId, term, logPosition, timestamp, fileOffset);
    }

    /**
     * Abandon the snapshot if it was not completed: the partial file is deleted.
     */
    public void close()
    {
        if (done)
        {
            return;
        }
        done = true;
        try
        {
            channel.close();
            Files.deleteIfExists(tmpFile);
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(tmpFile, "cannot remove abandoned snapshot", ex);
        }
    }

    private void appendFrame(final int type, final DirectBuffer src, final int offset, final int length)
    {
        final int frameLength = HEADER_LENGTH + length;
        final int aligned = alignedFrameLength(length);
        if (bufferLength + aligned > buffer.capacity())
        {
            writeBuffer();
        }
        final int frameOffset = bufferLength;
        buffer.putInt(frameOffset, frameLength, LITTLE_ENDIAN);
        buffer.putLong(frameOffset + TERM_OFFSET, term, LITTLE_ENDIAN);
        buffer.putLong(frameOffset + POSITION_OFFSET, fileOffset + frameOffset, LITTLE_ENDIAN);
        buffer.putInt(frameOffset + TYPE_OFFSET, type, LITTLE_ENDIAN);
        buffer.putInt(frameOffset + RESERVED_OFFSET, 0, LITTLE_ENDIAN);
        buffer.putBytes(frameOffset + HEADER_LENGTH, src, offset, length);
        buffer.setMemory(frameOffset + frameLength, aligned - frameLength, (byte)0);
        buffer.putInt(frameOffset + CHECKSUM_OFFSET, checksum.compute(buffer, frameOffset, frameLength, false),
            LITTLE_ENDIAN);
        bufferLength += aligned;
    }

    private void writeBuffer()
    {
        byteBuffer.clear().limit(bufferLength);
        try
        {
            while (byteBuffer.hasRemaining())
            {
                channel.write(byteBuffer);
            }
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(tmpFile, "cannot write snapshot", ex);
        }
        fileOffset += bufferLength;
        bufferLength = 0;
    }
}
