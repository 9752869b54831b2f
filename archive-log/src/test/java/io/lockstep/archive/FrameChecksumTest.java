package io.lockstep.archive;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The checksum is part of the on-disk format: a log written by one version is read by the next. A change to what it
 * covers would still agree with itself (writer and reader share the code), so every other test would pass; these
 * pin it to its definition, computed here independently: CRC32C over the frame from its term field to its aligned
 * end, then the frame length, little-endian (a padding frame: its header only).
 */
class FrameChecksumTest
{
    @Test
    void aFramesChecksumIsCrc32cOfItsBytesFromTheTermToItsAlignedEndThenItsLength()
    {
        final FrameChecksum checksum = new FrameChecksum();
        for (final int frameLength : new int[]{HEADER_LENGTH, HEADER_LENGTH + 1, 100, 0x01_02_03 + HEADER_LENGTH})
        {
            final int aligned = FrameDescriptor.alignedLength(frameLength);
            final UnsafeBuffer heap = new UnsafeBuffer(new byte[aligned + 64]);
            final UnsafeBuffer direct = new UnsafeBuffer(BufferUtil.allocateDirectAligned(aligned + 64, 64));
            for (final UnsafeBuffer buffer : new UnsafeBuffer[]{heap, direct})
            {
                fill(buffer, 32, aligned, frameLength);
                assertEquals(expected(buffer, 32, frameLength, aligned), checksum.compute(buffer, 32, frameLength,
                    false), "frame of " + frameLength + " bytes, " + (buffer == heap ? "heap" : "direct"));
            }
        }
    }

    @Test
    void aPaddingFramesChecksumCoversItsHeaderOnly()
    {
        final FrameChecksum checksum = new FrameChecksum();
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        fill(buffer, 0, 4096, 4096);
        final int before = checksum.compute(buffer, 0, 4096, true);
        assertEquals(expected(buffer, 0, 4096, HEADER_LENGTH), before);
        buffer.putByte(HEADER_LENGTH + 7, (byte)0x5A);
        assertEquals(before, checksum.compute(buffer, 0, 4096, true), "bytes after a padding frame's header are not " +
            "covered");
        buffer.putByte(TERM_OFFSET + 1, (byte)0x5A);
        assertNotEquals(before, checksum.compute(buffer, 0, 4096, true), "its header is");
    }

    @Test
    void aRangesChecksumIsCrc32cOfTheRangeAloneEachTime()
    {
        final FrameChecksum checksum = new FrameChecksum();
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[300]);
        fill(buffer, 0, 300, 300);
        final CRC32C crc = new CRC32C();
        crc.update(buffer.byteArray(), 10, 250);
        assertEquals((int)crc.getValue(), checksum.computeRange(buffer, 10, 260));
        assertEquals((int)crc.getValue(), checksum.computeRange(buffer, 10, 260), "the same again: nothing carried " +
            "over");
    }

    private static void fill(final UnsafeBuffer buffer, final int offset, final int length, final int frameLength)
    {
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(offset + i, (byte)(i * 31 + 7));
        }
        buffer.putInt(offset, frameLength, ByteOrder.LITTLE_ENDIAN);
    }

    private static int expected(final UnsafeBuffer buffer, final int offset, final int frameLength, final int covered)
    {
        final byte[] bytes = new byte[covered - TERM_OFFSET];
        buffer.getBytes(offset + TERM_OFFSET, bytes);
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        crc.update(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, frameLength));
        return (int)crc.getValue();
    }
}
