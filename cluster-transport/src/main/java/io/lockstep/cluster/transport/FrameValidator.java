package io.lockstep.cluster.transport;

import org.agrona.DirectBuffer;

import java.nio.ByteOrder;

/**
 * The one check every message from a connection passes before any decoder wraps it: the bytes the length prefix
 * framed hold an SBE header of a schema and version this side reads, a template it knows, a fixed block at least as
 * long as that version's fields, and every repeating group and variable-length field the message declares, each
 * inside the frame and within its bound, ending exactly where the frame ends. Whatever passes can be read by the
 * generated decoders without running past the message; whatever fails closes the connection, with
 * {@link #reason()} saying why.
 * <p>
 * Allocation-free on the hot path: a failure records its kind and numbers, and the reason string is built only when
 * asked for (once, as the connection is dropped).
 */
public final class FrameValidator
{
    static final int HEADER_LENGTH = 8;

    private static final int OK = 0;
    private static final int SHORTER_THAN_HEADER = 1;
    private static final int UNKNOWN_SCHEMA = 2;
    private static final int NEWER_VERSION = 3;
    private static final int UNKNOWN_TEMPLATE = 4;
    private static final int SHORT_BLOCK = 5;
    private static final int BLOCK_PAST_END = 6;
    private static final int HEADER_PAST_END = 7;
    private static final int FIELD_TOO_LONG = 8;
    private static final int FIELD_PAST_END = 9;
    private static final int SHORT_ENTRY = 10;
    private static final int ENTRIES_PAST_END = 11;
    private static final int TRAILING_BYTES = 12;

    private final MessageShapes shapes;
    private int failure;
    private int schemaId;
    private int templateId;
    private int version;
    private long value;
    private long bound;

    /**
     * @param shapes the protocols this side reads.
     */
    public FrameValidator(final MessageShapes shapes)
    {
        this.shapes = shapes;
    }

    MessageShapes shapes()
    {
        return shapes;
    }

    /**
     * @param buffer holding the message (header first, no length prefix).
     * @param offset where the message starts.
     * @param length the frame's length, as its prefix said.
     * @return true if the message is whole and of a kind this side reads; false with {@link #reason()} if not.
     */
    public boolean isValid(final DirectBuffer buffer, final int offset, final int length)
    {
        failure = OK;
        if (length < HEADER_LENGTH)
        {
            return fail(SHORTER_THAN_HEADER, length, HEADER_LENGTH);
        }
        final int blockLength = buffer.getShort(offset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        templateId = buffer.getShort(offset + 2, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        schemaId = buffer.getShort(offset + 4, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        version = buffer.getShort(offset + 6, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int newest = shapes.newestVersion(schemaId);
        if (newest < 0)
        {
            return fail(UNKNOWN_SCHEMA, 0, 0);
        }
        if (version > newest)
        {
            return fail(NEWER_VERSION, version, newest);
        }
        final MessageShape shape = shapes.shape(schemaId, templateId);
        if (null == shape)
        {
            return fail(UNKNOWN_TEMPLATE, 0, 0);
        }
        final int end = offset + length;
        final int limit = walk(shape, blockLength, buffer, offset + HEADER_LENGTH, end);
        if (limit < 0)
        {
            return false;
        }
        if (limit != end)
        {
            return fail(TRAILING_BYTES, end - limit, length);
        }
        return true;
    }

    /**
     * @return where the block and everything after it ends, or -1 having recorded why it does not fit.
     */
    private int walk(
        final MessageShape shape, final int blockLength, final DirectBuffer buffer, final int start, final int end)
    {
        final int minBlock = shape.minBlockLength(version);
        if (blockLength < minBlock)
        {
            fail(SHORT_BLOCK, blockLength, minBlock);
            return -1;
        }
        if (blockLength > end - start)
        {
            fail(BLOCK_PAST_END, blockLength, end - start);
            return -1;
        }
        int limit = start + blockLength;
        for (int part = 0; part < shape.parts(); part++)
        {
            if (shape.sinceVersion(part) > version)
            {
                continue;
            }
            if (end - limit < (shape.isGroup(part) ? MessageShape.GROUP_HEADER_LENGTH :
                MessageShape.VAR_DATA_HEADER_LENGTH))
            {
                fail(HEADER_PAST_END, end - limit, 0);
                return -1;
            }
            limit = shape.isGroup(part) ? walkGroup(shape.entry(part), buffer, limit, end) :
                skipVarData(shape.maxLength(part), buffer, limit, end);
            if (limit < 0)
            {
                return -1;
            }
        }
        return limit;
    }

    private int walkGroup(final MessageShape entry, final DirectBuffer buffer, final int at, final int end)
    {
        final int entryBlock = buffer.getShort(at, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int count = buffer.getShort(at + 2, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        if (entryBlock < entry.minBlockLength(version))
        {
            fail(SHORT_ENTRY, entryBlock, entry.minBlockLength(version));
            return -1;
        }
        int limit = at + MessageShape.GROUP_HEADER_LENGTH;
        // Each entry takes at least its block: a count the rest of the frame cannot hold fails here, before any
        // entry is walked, so the work per frame stays bounded by its length.
        if ((long)count * entryBlock > end - limit)
        {
            fail(ENTRIES_PAST_END, (long)count * entryBlock, end - limit);
            return -1;
        }
        for (int i = 0; i < count && limit >= 0; i++)
        {
            limit = walk(entry, entryBlock, buffer, limit, end);
        }
        return limit;
    }

    private int skipVarData(final int maxLength, final DirectBuffer buffer, final int at, final int end)
    {
        final long fieldLength = buffer.getInt(at, ByteOrder.LITTLE_ENDIAN) & 0xFFFF_FFFFL;
        if (fieldLength > maxLength)
        {
            fail(FIELD_TOO_LONG, fieldLength, maxLength);
            return -1;
        }
        final int start = at + MessageShape.VAR_DATA_HEADER_LENGTH;
        if (fieldLength > end - start)
        {
            fail(FIELD_PAST_END, fieldLength, end - start);
            return -1;
        }
        return start + (int)fieldLength;
    }

    private boolean fail(final int failure, final long value, final long bound)
    {
        this.failure = failure;
        this.value = value;
        this.bound = bound;
        return false;
    }

    /**
     * @return why the last message checked failed, naming the message; null if it passed. Allocates.
     */
    public String reason()
    {
        final String message = "template " + templateId + " of schema " + schemaId + " version " + version;
        return switch (failure)
        {
            case OK -> null;
            case SHORTER_THAN_HEADER -> "a message of " + value + " bytes, shorter than the 8-byte header";
            case UNKNOWN_SCHEMA -> "unknown schema id " + schemaId;
            case NEWER_VERSION -> "protocol version " + value + " of schema " + schemaId + " is newer than " + bound;
            case UNKNOWN_TEMPLATE -> "unknown message: " + message;
            case SHORT_BLOCK -> message + " declares a block of " + value + " bytes, shorter than the " + bound +
                " its fields take";
            case BLOCK_PAST_END -> message + " declares a block of " + value + " bytes, but " + bound +
                " follow its header";
            case HEADER_PAST_END -> message + " ends (" + value + " bytes left) where a group or field header is due";
            case FIELD_TOO_LONG -> message + " has a field of " + value + " bytes, over its bound of " + bound;
            case FIELD_PAST_END -> message + " has a field of " + value + " bytes, but " + bound + " remain";
            case SHORT_ENTRY -> message + " declares group entries of " + value + " bytes, shorter than the " +
                bound + " their fields take";
            case ENTRIES_PAST_END -> message + " declares group entries of " + value + " bytes, but " + bound +
                " remain";
            case TRAILING_BYTES -> message + " has " + value + " bytes after its last field (frame of " + bound +
                " bytes)";
            default -> "malformed " + message;
        };
    }
}
