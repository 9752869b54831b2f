package io.lockstep.consensus.storage;

import io.lockstep.consensus.ElectionStateStore;

import io.lockstep.archive.AtomicFile;
import io.lockstep.consensus.codecs.ElectionStateDecoder;
import io.lockstep.consensus.codecs.ElectionStateEncoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Term and vote in the file {@code election.state}: an SBE {@code ElectionState} and a CRC32C, replaced atomically
 * (temporary file, fsync, rename, directory fsync) on every change, so a crash leaves the old pair or the new one.
 * Elections are rare, so an fsync each is cheap; answering before it would break election safety.
 */
public final class FileElectionState implements ElectionStateStore
{
    /** Name of the file in a member's data directory. */
    public static final String FILE_NAME = "election.state";
    private static final int LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + ElectionStateEncoder.BLOCK_LENGTH;

    private final Path file;
    private long term;
    private int votedFor = NO_VOTE;

    /**
     * @param directory the member's data directory.
     * @throws IllegalStateException naming the file if it exists but is damaged.
     */
    public FileElectionState(final Path directory)
    {
        this.file = directory.resolve(FILE_NAME);
        final byte[] bytes = AtomicFile.readOrNull(file);
        if (null != bytes)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
            if (bytes.length != LENGTH + Integer.BYTES ||
                buffer.getInt(LENGTH, ByteOrder.LITTLE_ENDIAN) != checksum(bytes))
            {
                throw new IllegalStateException(file + " is damaged (length " + bytes.length +
                    " or checksum wrong): the member cannot know its term and vote, so it will not start");
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            final ElectionStateDecoder decoder = new ElectionStateDecoder().wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            term = decoder.term();
            votedFor = decoder.votedFor();
        }
    }

    public long term()
    {
        return term;
    }

    public int votedFor()
    {
        return votedFor;
    }

    public void save(final long term, final int votedFor)
    {
        final byte[] bytes = new byte[LENGTH + Integer.BYTES];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        new ElectionStateEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term)
            .votedFor(votedFor);
        buffer.putInt(LENGTH, checksum(bytes), ByteOrder.LITTLE_ENDIAN);
        AtomicFile.write(file, ByteBuffer.wrap(bytes));
        this.term = term;
        this.votedFor = votedFor;
    }

    private static int checksum(final byte[] bytes)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, LENGTH);
        return (int)crc.getValue();
    }
}
