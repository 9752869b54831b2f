package io.lockstep.archive;

import io.lockstep.archive.codecs.LogDescriptorDecoder;
import io.lockstep.archive.codecs.LogDescriptorEncoder;
import io.lockstep.archive.codecs.MessageHeaderDecoder;
import io.lockstep.archive.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

import static io.lockstep.archive.ArchiveException.Reason.CONFIG_MISMATCH;
import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_DESCRIPTOR;
import static io.lockstep.archive.ArchiveException.Reason.UNSUPPORTED_FORMAT;

/**
 * The descriptor of a log directory: format version, segment length, batch bound and initial position, fixed when
 * the directory is created. Layout: SBE message header, {@code LogDescriptor}, then a CRC32C of the bytes before it.
 */
final class LogDescriptorFile
{
    private static final int LENGTH =
        MessageHeaderEncoder.ENCODED_LENGTH + LogDescriptorEncoder.BLOCK_LENGTH + Integer.BYTES;

    /**
     * The values fixed at creation.
     *
     * @param formatVersion   version that wrote the directory.
     * @param segmentLength   length of each segment.
     * @param maxBatchLength  bound on one write batch.
     * @param initialPosition position of the first frame.
     */
    record Values(int formatVersion, int segmentLength, int maxBatchLength, long initialPosition)
    {
    }

    private LogDescriptorFile()
    {
    }

    /**
     * Read the descriptor, or create it if the directory holds no log yet.
     *
     * @param config settings to create with, and to check an existing log against.
     * @param create false to refuse creating a new log (read-only use).
     * @return the directory's fixed values.
     */
    static Values openOrCreate(final ArchiveLogConfig config, final boolean create)
    {
        final Path file = config.directory().resolve(LogFormat.DESCRIPTOR_FILE);
        final byte[] bytes = AtomicFile.readOrNull(file);
        if (null == bytes)
        {
            final long[] bases = SegmentFiles.listBasePositions(config.directory());
            if (bases.length > 0)
            {
                throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1,
                    "segment files present but no log descriptor: not a Lockstep log directory, or its descriptor " +
                    "was lost");
            }
            if (!create)
            {
                throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1, "no log descriptor: not a log directory");
            }
            final Values values = new Values(LogFormat.FORMAT_VERSION, config.segmentLength(),
                config.maxBatchLength(), config.initialPosition());
            write(file, values);
            return values;
        }

        final Values values = decode(file, bytes);
        if (values.segmentLength() != config.segmentLength() || values.maxBatchLength() != config.maxBatchLength())
        {
            throw new ArchiveException(CONFIG_MISMATCH, file, -1, "log was created with segmentLength=" +
                values.segmentLength() + " maxBatchLength=" + values.maxBatchLength()
                    + " but is opened with segmentLength=" +
                config.segmentLength() + " maxBatchLength=" + config.maxBatchLength());
        }
        return values;
    }

    /**
     * Read an existing descriptor as it is, whatever the configuration says (for verification tools).
     *
     * @param directory log directory.
     * @return the directory's fixed values.
     */
    static Values read(final Path directory)
    {
        final Path file = directory.resolve(LogFormat.DESCRIPTOR_FILE);
        final byte[] bytes = AtomicFile.readOrNull(file);
        if (null == bytes)
        {
            throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1, "no log descriptor: not a log directory");
        }
        return decode(file, bytes);
    }

    private static Values decode(final Path file, final byte[] bytes)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        if (bytes.length < MessageHeaderDecoder.ENCODED_LENGTH + Integer.BYTES * 2)
        {
            throw new ArchiveException(CORRUPT_DESCRIPTOR, file, -1, "descriptor too short: " + bytes.length
                + " bytes");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        if (header.schemaId() != LogDescriptorDecoder.SCHEMA_ID
            || header.templateId() != LogDescriptorDecoder.TEMPLATE_ID)
        {
            throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1, "not a Lockstep log descriptor (schemaId=" +
                header.schemaId() + " templateId=" + header.templateId() + ")");
        }
        // The version is read before the checksum: a newer format may checksum differently, and the useful message
        // then is "newer version", not "corrupt".
        final LogDescriptorDecoder decoder = new LogDescriptorDecoder();
        decoder.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        if (decoder.formatVersion() > LogFormat.FORMAT_VERSION
            || header.version() > LogDescriptorDecoder.SCHEMA_VERSION)
        {
            throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1, "log written by format version " +
                decoder.formatVersion() + "; this build reads up to " + LogFormat.FORMAT_VERSION);
        }
        if (bytes.length != LENGTH)
        {
            throw new ArchiveException(CORRUPT_DESCRIPTOR, file, -1, "descriptor has " + bytes.length +
                " bytes, expected " + LENGTH);
        }
        final int expected = buffer.getInt(LENGTH - Integer.BYTES, ByteOrder.LITTLE_ENDIAN);
        if (expected != new FrameChecksum().computeRange(buffer, 0, LENGTH - Integer.BYTES))
        {
            throw new ArchiveException(CORRUPT_DESCRIPTOR, file, -1, "descriptor checksum mismatch");
        }
        return new Values(
            decoder.formatVersion(), decoder.segmentLength(), decoder.maxBatchLength(), decoder.initialPosition());
    }

    static void write(final Path file, final Values values)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[LENGTH]);
        new LogDescriptorEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .formatVersion(values.formatVersion())
            .segmentLength(values.segmentLength())
            .maxBatchLength(values.maxBatchLength())
            .initialPosition(values.initialPosition())
            .createdTimestampMs(System.currentTimeMillis());
        buffer.putInt(LENGTH - Integer.BYTES,
            new FrameChecksum().computeRange(buffer, 0, LENGTH - Integer.BYTES), ByteOrder.LITTLE_ENDIAN);
        AtomicFile.write(file, ByteBuffer.wrap(buffer.byteArray()));
    }
}
