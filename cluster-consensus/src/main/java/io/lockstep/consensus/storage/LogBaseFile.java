package io.lockstep.consensus.storage;

import io.lockstep.archive.AtomicFile;
import io.lockstep.consensus.codecs.LogBaseDecoder;
import io.lockstep.consensus.codecs.LogBaseEncoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Where a purged or reset log starts and the term of the frame that ended there (the frame itself is gone): one
 * small file, replaced atomically, with a checksum. Absent means the log starts at its very beginning, term 0.
 */
final class LogBaseFile
{
    private static final int LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + LogBaseEncoder.BLOCK_LENGTH;

    private final Path file;
    private long position;
    private long term;

    LogBaseFile(final Path file)
    {
        this.file = file;
        final byte[] bytes = AtomicFile.readOrNull(file);
        if (null != bytes)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
            if (bytes.length != LENGTH + Integer.BYTES ||
                buffer.getInt(LENGTH, ByteOrder.LITTLE_ENDIAN) != checksum(bytes))
            {
                throw new IllegalStateException(file + " is damaged (length " + bytes.length + " or checksum wrong): " +
                    "the term where the log starts is unknown, so the member will not start");
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            final LogBaseDecoder decoder = new LogBaseDecoder()
                .wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            position = decoder.position();
            term = decoder.term();
        }
    }

    long position()
    {
        return position;
    }

    long term()
    {
        return term;
    }

    void save(final long position, final long term)
    {
        final byte[] bytes = new byte[LENGTH + Integer.BYTES];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        new LogBaseEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).position(position).term(term);
        buffer.putInt(LENGTH, checksum(bytes), ByteOrder.LITTLE_ENDIAN);
        AtomicFile.write(file, ByteBuffer.wrap(bytes));
        this.position = position;
        this.term = term;
    }

    private static int checksum(final byte[] bytes)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, LENGTH);
        return (int)crc.getValue();
    }
}
