package io.lockstep.archive;

import io.lockstep.archive.codecs.MessageHeaderDecoder;
import io.lockstep.archive.codecs.MessageHeaderEncoder;
import io.lockstep.archive.codecs.PromiseMarkDecoder;
import io.lockstep.archive.codecs.PromiseMarkEncoder;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.zip.CRC32C;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The highest log position this member may have acknowledged, and the term of the frame ending there, kept apart
 * from the data it speaks of. Recovery needs it to tell a torn last write (never acknowledged: cut it) from damage to
 * frames that were made durable and possibly acknowledged (cutting those silently could lose a committed entry).
 * <p>
 * Layout: a 1 KiB memory-mapped file with two slots, at offsets 0 and {@link #SLOT_STRIDE}, each an SBE
 * {@code PromiseMark} followed by a CRC32C of it. A slot sits inside one 512-byte sector, and writes alternate
 * between the slots, so a power loss while one is written leaves the other whole; the valid slot with the higher
 * sequence is the promise.
 * <pre>
 *   0          8         16         24         32          40          48       52      56
 *   | header   | sequence | position | term     | bootIdHigh | bootIdLow  | forced | crc32c |
 * </pre>
 * When a slot can be trusted after a restart:
 * <ul>
 *   <li>{@code forced}: written under {@code BATCH} and forced to disk only after the data it covers was: it never
 *   claims more than the disk held, whatever crashed.</li>
 *   <li>not forced ({@code NONE}): a store into the page cache, free on the hot path. It survives a process crash
 *   exactly as the data pages do, so it is trusted if the machine has not restarted since (same boot id); after a
 *   machine restart it may claim data that never reached the disk, and is ignored.</li>
 * </ul>
 * One writer at a time: the log's writer thread, or under {@code BATCH} its sync thread, which the writer waits for
 * before it records a promise itself ({@code ArchiveLog.lowerPromise}).
 */
final class PromiseFile implements AutoCloseable
{
    /** No promise could be trusted: recovery falls back to telling torn writes by their distance from the end. */
    static final long UNKNOWN = -1;

    static final int SLOT_STRIDE = 512;
    private static final int FILE_LENGTH = 2 * SLOT_STRIDE;
    private static final int MARK_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + PromiseMarkEncoder.BLOCK_LENGTH;
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private final Path file;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final PromiseMarkEncoder encoder = new PromiseMarkEncoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final CRC32C crc = new CRC32C();
    private final byte[] scratch = new byte[MARK_LENGTH];
    private final long bootIdHigh;
    private final long bootIdLow;
    private long sequence;
    // Volatile: under BATCH the log's sync thread records the promise, and the writer's thread reads it.
    private volatile long position = UNKNOWN;
    private volatile long term = ArchiveLog.NULL_TERM;
    private boolean trusted;

    private PromiseFile(final Path file, final MappedByteBuffer mapped, final UnsafeBuffer buffer, final UUID bootId)
    {
        this.file = file;
        this.mapped = mapped;
        this.buffer = buffer;
        this.bootIdHigh = bootId.getMostSignificantBits();
        this.bootIdLow = bootId.getLeastSignificantBits();
    }

    /**
     * Map the file, creating it empty if absent, and read the promise it holds.
     *
     * @param file the promise file.
     * @return the open file; {@link #position()} is {@link #UNKNOWN} if nothing in it can be trusted.
     */
    static PromiseFile open(final Path file)
    {
        return open(file, currentBootId());
    }

    static PromiseFile open(final Path file, final UUID bootId)
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            if (channel.size() < FILE_LENGTH)
            {
                // New, or cut short by a crash while created: a zero slot fails its checksum, so nothing is claimed.
                channel.write(ByteBuffer.allocate((int)(FILE_LENGTH - channel.size())), channel.size());
                channel.force(true);
                SegmentFiles.fsyncDirectory(file.toAbsolutePath().getParent());
            }
            final MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_LENGTH);
            final PromiseFile promise = new PromiseFile(file, mapped, new UnsafeBuffer(mapped), bootId);
            promise.load();
            return promise;
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot open promise file", ex);
        }
    }

    static final String OK = "ok";
    static final String MISSING = "missing";
    static final String UNTRUSTED = "untrusted";

    /**
     * @return {@link #OK} if the file holds a promise that can be trusted, {@link #MISSING} if there is no file,
     * {@link #UNTRUSTED} if it holds none (zeroed, damaged, or unforced from before a machine restart).
     */
    static String status(final Path file)
    {
        if (!Files.exists(file))
        {
            return MISSING;
        }
        return UNKNOWN == peek(file).position() ? UNTRUSTED : OK;
    }

    /**
     * Read the promise a log directory holds, changing nothing (for verification).
     *
     * @param file the promise file.
     * @return the trusted promised position, or {@link #UNKNOWN} if absent or not trusted.
     */
    static ArchiveLog.Promise peek(final Path file)
    {
        final byte[] bytes = AtomicFile.readOrNull(file);
        if (null == bytes || bytes.length < FILE_LENGTH)
        {
            return new ArchiveLog.Promise(UNKNOWN, ArchiveLog.NULL_TERM);
        }
        final PromiseFile promise = new PromiseFile(file, null, new UnsafeBuffer(bytes), currentBootId());
        promise.load();
        return new ArchiveLog.Promise(promise.position(), promise.term());
    }

    private void load()
    {
        final PromiseMarkDecoder decoder = new PromiseMarkDecoder();
        for (int slot = 0; slot < 2; slot++)
        {
            final int offset = slot * SLOT_STRIDE;
            if (buffer.getInt(offset + MARK_LENGTH, LITTLE_ENDIAN) != checksum(offset) ||
                buffer.getShort(offset + 2, LITTLE_ENDIAN) != PromiseMarkDecoder.TEMPLATE_ID)
            {
                continue;
            }
            decoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, PromiseMarkDecoder.BLOCK_LENGTH,
                PromiseMarkDecoder.SCHEMA_VERSION);
            if (decoder.sequence() <= sequence)
            {
                continue;
            }
            sequence = decoder.sequence();
            trusted = 1 == decoder.forced() ||
                (decoder.bootIdHigh() == bootIdHigh && decoder.bootIdLow() == bootIdLow);
            position = trusted ? decoder.position() : UNKNOWN;
            term = trusted ? decoder.term() : ArchiveLog.NULL_TERM;
        }
    }

    /**
     * @return the promised position, or {@link #UNKNOWN}.
     */
    long position()
    {
        return position;
    }

    /**
     * @return the term of the frame ending at {@link #position()}.
     */
    long term()
    {
        return term;
    }

    /**
     * Record a new promise in the next slot. Not durable by itself: see {@link #force()}.
     *
     * @param position the highest position that may now be acknowledged.
     * @param term     term of the frame ending there.
     * @param forced   true if the caller forces it, after the data it covers was forced.
     */
    void record(final long position, final long term, final boolean forced)
    {
        sequence++;
        final int offset = (int)(sequence & 1) * SLOT_STRIDE;
        encoder.wrapAndApplyHeader(buffer, offset, headerEncoder)
            .sequence(sequence).position(position).term(term).bootIdHigh(bootIdHigh).bootIdLow(bootIdLow)
            .forced(forced ? 1 : 0);
        buffer.putInt(offset + MARK_LENGTH, checksum(offset), LITTLE_ENDIAN);
        this.position = position;
        this.term = term;
    }

    /**
     * Make the last {@link #record} durable (one msync of the file's single page).
     */
    void force()
    {
        mapped.force();
    }

    Path file()
    {
        return file;
    }

    private int checksum(final int offset)
    {
        buffer.getBytes(offset, scratch, 0, MARK_LENGTH);
        crc.reset();
        crc.update(scratch, 0, MARK_LENGTH);
        return (int)crc.getValue();
    }

    public void close()
    {
        IoUtil.unmap(mapped);
    }

    /**
     * @return this boot's id, or a fresh random one where the system does not say (so that unforced promises from
     * an earlier process are never trusted there).
     */
    static UUID currentBootId()
    {
        try
        {
            return UUID.fromString(Files.readString(BOOT_ID).trim());
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            return UUID.randomUUID();
        }
    }
}
