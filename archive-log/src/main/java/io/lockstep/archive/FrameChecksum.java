package io.lockstep.archive;

import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;

/**
 * Computes frame checksums over Agrona buffers without allocating: CRC32C (a JVM intrinsic) is fed from the
 * buffer's backing array, or from a view of its backing {@link ByteBuffer}. Views are cached for the two most
 * recent backing buffers, so a caller alternating between two (a network buffer and a batch buffer) allocates
 * nothing once warm. Not thread safe: one instance per thread.
 */
final class FrameChecksum
{
    private final CRC32C crc = new CRC32C();
    private ByteBuffer source0;
    private ByteBuffer view0;
    private ByteBuffer source1;
    private ByteBuffer view1;

    /**
     * @param buffer      holding the frame.
     * @param frameOffset index of the frame header in the buffer.
     * @param frameLength unaligned frame length, as in the header.
     * @param padding     true if the frame is padding, whose checksum covers only the header.
     * @return the checksum to store in, or compare with, the header.
     */
    int compute(final DirectBuffer buffer, final int frameOffset, final int frameLength, final boolean padding)
    {
        // The alignment gap is covered too (writers zero it), so no stored byte of a frame escapes the check.
        final int coveredLength = padding ? HEADER_LENGTH : FrameDescriptor.alignedLength(frameLength);
        crc.reset();
        update(buffer, frameOffset + TERM_OFFSET, frameOffset + coveredLength);
        crc.update(frameLength & 0xFF);
        crc.update((frameLength >>> 8) & 0xFF);
        crc.update((frameLength >>> 16) & 0xFF);
        crc.update((frameLength >>> 24) & 0xFF);
        return (int)crc.getValue();
    }

    /**
     * CRC32C of an arbitrary range, for whole-file checksums.
     *
     * @param buffer holding the bytes.
     * @param from   first index.
     * @param to     index after the last.
     * @return the checksum.
     */
    int computeRange(final DirectBuffer buffer, final int from, final int to)
    {
        crc.reset();
        update(buffer, from, to);
        return (int)crc.getValue();
    }

    private void update(final DirectBuffer buffer, final int from, final int to)
    {
        final byte[] array = buffer.byteArray();
        if (null != array)
        {
            crc.update(array, buffer.wrapAdjustment() + from, to - from);
            return;
        }

        final ByteBuffer source = buffer.byteBuffer();
        if (null == source)
        {
            throw new IllegalArgumentException("buffer must wrap a byte[] or a ByteBuffer to be checksummed");
        }
        final ByteBuffer view;
        if (source == source0)
        {
            view = view0;
        }
        else if (source == source1)
        {
            view = view1;
        }
        else
        {
            // Replace the older slot: keep the most recent one.
            source1 = source0;
            view1 = view0;
            source0 = source;
            view0 = source.duplicate();
            view = view0;
        }
        final int base = buffer.wrapAdjustment();
        view.clear();
        view.limit(base + to).position(base + from);
        crc.update(view);
    }
}
