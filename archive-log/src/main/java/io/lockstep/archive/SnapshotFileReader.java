package io.lockstep.archive;

import io.lockstep.archive.codecs.MessageHeaderDecoder;
import io.lockstep.archive.codecs.SnapshotHeaderDecoder;
import io.lockstep.archive.codecs.SnapshotTrailerDecoder;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_SNAPSHOT;
import static io.lockstep.archive.ArchiveException.Reason.UNSUPPORTED_FORMAT;
import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_FRAGMENT_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_HEADER_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.SNAPSHOT_TRAILER_FRAME_TYPE;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static io.lockstep.archive.FrameDescriptor.alignedFrameLength;
import static io.lockstep.archive.FrameDescriptor.alignedLength;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Reads a snapshot's fragments in order, checking each frame's checksum and position as it goes and, at the end,
 * that the trailer's fragment count and length match what was read. Any mismatch is {@code CORRUPT_SNAPSHOT} naming
 * the file and offset.
 */
public final class SnapshotFileReader implements AutoCloseable
{
    private final Path file;
    private final FileChannel channel;
    private final long fileSize;
    private final ByteBuffer byteBuffer;
    private final UnsafeBuffer buffer;
    private final FrameValidator validator;
    private final SnapshotInfo info;
    private long offset;
    private long fragmentCount;
    private long payloadLength;
    private boolean done;

    SnapshotFileReader(final Path file, final int maxFragmentLength)
    {
        this.file = file;
        try
        {
            channel = FileChannel.open(file, StandardOpenOption.READ);
            fileSize = channel.size();
        }
        catch (final NoSuchFileException ex)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, -1, "snapshot file does not exist");
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot open snapshot", ex);
        }
        byteBuffer = BufferUtil.allocateDirectAligned(alignedFrameLength(maxFragmentLength), 64);
        buffer = new UnsafeBuffer(byteBuffer);
        validator = new FrameValidator(HEADER_LENGTH + maxFragmentLength);

        final int frameLength = readFrame();
        if (SNAPSHOT_HEADER_FRAME_TYPE != buffer.getInt(TYPE_OFFSET, LITTLE_ENDIAN))
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, 0, "first frame is not a snapshot header");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, HEADER_LENGTH);
        if (header.templateId() != SnapshotHeaderDecoder.TEMPLATE_ID
            || header.schemaId() != SnapshotHeaderDecoder.SCHEMA_ID)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, 0, "header frame does not hold a SnapshotHeader");
        }
        final SnapshotHeaderDecoder decoder = new SnapshotHeaderDecoder().wrap(
            buffer, HEADER_LENGTH + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        if (decoder.formatVersion() > LogFormat.FORMAT_VERSION)
        {
            throw new ArchiveException(UNSUPPORTED_FORMAT, file, 0, "snapshot written by format version " +
                decoder.formatVersion() + "; this build reads up to " + LogFormat.FORMAT_VERSION);
        }
        info = new SnapshotInfo(file.getFileName().toString(), decoder.serviceId(), decoder.term(),
            decoder.logPosition(), decoder.timestamp(), fileSize);
        offset += alignedLength(frameLength);
    }

    /**
     * @return what the snapshot's header says.
     */
    public SnapshotInfo info()
    {
        return info;
    }

    /**
     * @return true once the trailer has been read and checked.
     */
    public boolean isDone()
    {
        return done;
    }

    /**
     * @param handler      receives each fragment.
     * @param maxFragments bound on fragments handed out in this call.
     * @return fragments handed out.
     */
    public int poll(final SnapshotFragmentHandler handler, final int maxFragments)
    {
        int count = 0;
        while (!done && count < maxFragments)
        {
            final int frameLength = readFrame();
            final int type = buffer.getInt(TYPE_OFFSET, LITTLE_ENDIAN);
            final long frameOffset = offset;
            offset += alignedLength(frameLength);
            if (SNAPSHOT_FRAGMENT_FRAME_TYPE == type)
            {
                fragmentCount++;
                payloadLength += frameLength - HEADER_LENGTH;
                count++;
                handler.onFragment(buffer, HEADER_LENGTH, frameLength - HEADER_LENGTH);
            }
            else if (SNAPSHOT_TRAILER_FRAME_TYPE == type)
            {
                checkTrailer(frameOffset);
            }
            else
            {
                throw new ArchiveException(CORRUPT_SNAPSHOT, file, frameOffset, "unexpected frame type " + type);
            }
        }
        return count;
    }

    public void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot close snapshot", ex);
        }
    }

    private void checkTrailer(final long frameOffset)
    {
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, HEADER_LENGTH);
        final SnapshotTrailerDecoder trailer = new SnapshotTrailerDecoder().wrap(
            buffer, HEADER_LENGTH + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        if (trailer.fragmentCount() != fragmentCount || trailer.payloadLength() != payloadLength)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, frameOffset, "trailer says " + trailer.fragmentCount() +
                " fragments of " + trailer.payloadLength() + " bytes, read " + fragmentCount + " of " + payloadLength);
        }
        if (offset != fileSize)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, offset, "bytes after the trailer");
        }
        done = true;
    }

    private int readFrame()
    {
        if (offset + HEADER_LENGTH > fileSize)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, offset, "snapshot ends before its trailer");
        }
        read(0, HEADER_LENGTH);
        final int frameLength = buffer.getInt(0, LITTLE_ENDIAN);
        final int aligned = alignedLength(frameLength);
        if (frameLength < HEADER_LENGTH || aligned > buffer.capacity() || offset + aligned > fileSize)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, offset, "frame length out of range: " + frameLength);
        }
        read(HEADER_LENGTH, aligned);
        final int result = validator.check(buffer, 0, aligned, (int)Math.min(fileSize - offset, Integer.MAX_VALUE),
            offset);
        if (result < 0)
        {
            throw new ArchiveException(CORRUPT_SNAPSHOT, file, offset, FrameValidator.describe(result));
        }
        return frameLength;
    }

    private void read(final int from, final int to)
    {
        byteBuffer.clear().limit(to).position(from);
        try
        {
            long position = offset + from;
            while (byteBuffer.hasRemaining())
            {
                final int read = channel.read(byteBuffer, position);
                if (read < 0)
                {
                    throw new ArchiveException(CORRUPT_SNAPSHOT, file, position, "unexpected end of file");
                }
                position += read;
            }
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot read snapshot", ex);
        }
    }
}
