package io.lockstep.archive;

import org.agrona.BitUtil;

/**
 * Layout of a stored frame, shared by log segments and snapshot files.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  Frame Length (header + payload)              |  0
 *  +---------------------------------------------------------------+
 *  |                  Checksum (CRC32C)                            |  4
 *  +---------------------------------------------------------------+
 *  |                  Term                                         |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Position of this frame                       | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Frame Type                                   | 24
 *  +---------------------------------------------------------------+
 *  |                  Reserved (0)                                 | 28
 *  +---------------------------------------------------------------+
 *  |                  Payload ...                                  | 32
 * </pre>
 * All fields little-endian. A frame starts on a {@link #FRAME_ALIGNMENT} boundary and the next frame starts at
 * {@code align(frameLength)}. A frame length of 0 means nothing has been written there: segments are sparse files
 * that read as zeros until written.
 * <p>
 * The checksum is CRC32C over bytes {@code [8, align(frameLength))} (the zeroed alignment gap included) followed by
 * the four bytes of the frame length, so a damaged length is caught as surely as damaged data. The frame's own position
 * is covered, so a frame written to the wrong place, or a stale copy of one, fails the check. A padding frame (type
 * {@link #PADDING_FRAME_TYPE}) fills the rest of a segment; its checksum covers only its header, since the space it
 * covers is never written.
 */
public final class FrameDescriptor
{
    /** Frames start on multiples of this; 8-byte fields are then never split across pages or sectors. */
    public static final int FRAME_ALIGNMENT = 32;
    /** Length of the frame header that precedes every payload. */
    public static final int HEADER_LENGTH = 32;

    public static final int FRAME_LENGTH_OFFSET = 0;
    public static final int CHECKSUM_OFFSET = 4;
    public static final int TERM_OFFSET = 8;
    public static final int POSITION_OFFSET = 16;
    public static final int TYPE_OFFSET = 24;
    public static final int RESERVED_OFFSET = 28;

    /** Frame type of the padding that fills the end of a segment. Negative types are reserved by archive-log. */
    public static final int PADDING_FRAME_TYPE = -1;
    /** Frame types of snapshot files. */
    static final int SNAPSHOT_HEADER_FRAME_TYPE = -10;
    static final int SNAPSHOT_FRAGMENT_FRAME_TYPE = -11;
    static final int SNAPSHOT_TRAILER_FRAME_TYPE = -12;

    private FrameDescriptor()
    {
    }

    /**
     * @param frameLength unaligned frame length.
     * @return the space the frame takes in the log.
     */
    public static int alignedLength(final int frameLength)
    {
        return BitUtil.align(frameLength, FRAME_ALIGNMENT);
    }

    /**
     * @param payloadLength length of the payload.
     * @return the space a frame with this payload takes in the log.
     */
    public static int alignedFrameLength(final int payloadLength)
    {
        return BitUtil.align(HEADER_LENGTH + payloadLength, FRAME_ALIGNMENT);
    }

    /**
     * @param position a log position.
     * @return true if a frame may start there.
     */
    public static boolean isAligned(final long position)
    {
        return (position & (FRAME_ALIGNMENT - 1)) == 0;
    }

    /**
     * @param position      a log position.
     * @param segmentLength a power of two.
     * @return where the segment holding the position starts.
     */
    static long segmentBase(final long position, final int segmentLength)
    {
        return position & ~((long)segmentLength - 1);
    }
}
