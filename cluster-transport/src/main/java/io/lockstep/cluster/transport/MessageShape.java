package io.lockstep.cluster.transport;

import java.util.Arrays;

/**
 * What one message template looks like on the wire, as much as a receiver must know to be sure a message is whole
 * before any decoder reads it: how long its fixed block is at each protocol version, then its repeating groups and
 * variable-length fields, in schema order. A group's entries have a shape of their own.
 * <pre>
 *   | header 8 | block (blockLength) | group: blockLength u16, count u16, entries... | var: length u32, bytes |
 * </pre>
 * Shapes are declared beside each schema ({@link ClientProtocolShapes}, and the member protocol's in the consensus
 * module), and a test holds every declaration to the schema's XML: a field added to a schema without its shape
 * fails the build, not a member in production.
 * <p>
 * Immutable once declared: the builder methods return a new shape.
 */
public final class MessageShape
{
    /** Every variable-length field in our schemas starts with a uint32 length. */
    static final int VAR_DATA_HEADER_LENGTH = Integer.BYTES;
    /** Every repeating group starts with a uint16 entry block length and a uint16 entry count. */
    static final int GROUP_HEADER_LENGTH = 2 * Short.BYTES;

    private static final int VAR_DATA = 1;
    private static final int GROUP = 2;

    /** Pairs {sinceVersion, blockLength}: from that version on, the fixed block is at least that long. */
    private final int[] blockSince;
    private final int[] partKind;
    private final int[] partSinceVersion;
    /** For a variable-length field, the longest its bytes may be. */
    private final int[] partMaxLength;
    /** For a group, the shape of each entry. */
    private final MessageShape[] partEntry;

    private MessageShape(
        final int[] blockSince,
        final int[] partKind,
        final int[] partSinceVersion,
        final int[] partMaxLength,
        final MessageShape[] partEntry)
    {
        this.blockSince = blockSince;
        this.partKind = partKind;
        this.partSinceVersion = partSinceVersion;
        this.partMaxLength = partMaxLength;
        this.partEntry = partEntry;
    }

    /**
     * @param blockLength the fixed block of a message (or group entry) whose fields are all there since the
     *                    protocol's first version.
     * @return a shape with that block and nothing after it.
     */
    public static MessageShape block(final int blockLength)
    {
        if (blockLength < 0)
        {
            throw new IllegalArgumentException("block length " + blockLength);
        }
        return new MessageShape(new int[]{0, blockLength}, new int[0], new int[0], new int[0], new MessageShape[0]);
    }

    /**
     * @param sinceVersion the protocol version that added fields at the end of the block.
     * @param blockLength  where those fields end: a message of that version or newer has at least this block.
     * @return this shape with that minimum added.
     */
    public MessageShape grownTo(final int sinceVersion, final int blockLength)
    {
        final int last = blockSince.length - 2;
        if (sinceVersion <= blockSince[last] || blockLength <= blockSince[last + 1] || partKind.length > 0)
        {
            throw new IllegalArgumentException("versions and block lengths grow, before any group or field: " +
                sinceVersion + ", " + blockLength + " after " + this);
        }
        final int[] grown = Arrays.copyOf(blockSince, blockSince.length + 2);
        grown[last + 2] = sinceVersion;
        grown[last + 3] = blockLength;
        return new MessageShape(grown, partKind, partSinceVersion, partMaxLength, partEntry);
    }

    /**
     * @param maxLength the longest the field's bytes may be (the schema's maxValue for its length).
     * @return this shape followed by a variable-length field there since the first version.
     */
    public MessageShape varData(final int maxLength)
    {
        return varData(0, maxLength);
    }

    /**
     * @param sinceVersion the version that added the field; older messages do not carry it.
     * @param maxLength    the longest the field's bytes may be (the schema's maxValue for its length).
     * @return this shape followed by a variable-length field.
     */
    public MessageShape varData(final int sinceVersion, final int maxLength)
    {
        return append(VAR_DATA, sinceVersion, maxLength, null);
    }

    /**
     * @param sinceVersion the version that added the group; older messages do not carry it.
     * @param entry        the shape of one entry.
     * @return this shape followed by a repeating group.
     */
    public MessageShape group(final int sinceVersion, final MessageShape entry)
    {
        for (final int kind : partKind)
        {
            if (VAR_DATA == kind)
            {
                throw new IllegalArgumentException("groups come before variable-length fields: " + this);
            }
        }
        return append(GROUP, sinceVersion, 0, entry);
    }

    private MessageShape append(final int kind, final int sinceVersion, final int maxLength, final MessageShape entry)
    {
        final int n = partKind.length;
        final int[] kinds = Arrays.copyOf(partKind, n + 1);
        final int[] since = Arrays.copyOf(partSinceVersion, n + 1);
        final int[] max = Arrays.copyOf(partMaxLength, n + 1);
        final MessageShape[] entries = Arrays.copyOf(partEntry, n + 1);
        kinds[n] = kind;
        since[n] = sinceVersion;
        max[n] = maxLength;
        entries[n] = entry;
        return new MessageShape(blockSince, kinds, since, max, entries);
    }

    /**
     * @param version the protocol version a message says it is.
     * @return the shortest fixed block a message of that version may declare.
     */
    int minBlockLength(final int version)
    {
        int length = 0;
        for (int i = 0; i < blockSince.length; i += 2)
        {
            if (blockSince[i] <= version)
            {
                length = blockSince[i + 1];
            }
        }
        return length;
    }

    int parts()
    {
        return partKind.length;
    }

    boolean isGroup(final int part)
    {
        return GROUP == partKind[part];
    }

    int sinceVersion(final int part)
    {
        return partSinceVersion[part];
    }

    int maxLength(final int part)
    {
        return partMaxLength[part];
    }

    MessageShape entry(final int part)
    {
        return partEntry[part];
    }

    /**
     * @return the shape in one line, for example {@code block[v0:8, v2:25] var(v2, max 4096)}: what the schema test
     * compares.
     */
    public String toString()
    {
        final StringBuilder out = new StringBuilder("block[");
        for (int i = 0; i < blockSince.length; i += 2)
        {
            out.append(i > 0 ? ", " : "").append('v').append(blockSince[i]).append(':').append(blockSince[i + 1]);
        }
        out.append(']');
        for (int i = 0; i < partKind.length; i++)
        {
            if (GROUP == partKind[i])
            {
                out.append(" group(v").append(partSinceVersion[i]).append(") {").append(partEntry[i]).append('}');
            }
            else
            {
                out.append(" var(v").append(partSinceVersion[i]).append(", max ").append(partMaxLength[i]).append(')');
            }
        }
        return out.toString();
    }
}
