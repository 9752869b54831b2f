package io.lockstep.archive;

import org.agrona.DirectBuffer;

/**
 * Receives a block of whole frames exactly as stored, for replication to another member's
 * {@link ArchiveLog#appendFrames}. The buffer is only valid during the call.
 */
@FunctionalInterface
public interface BlockHandler
{
    /**
     * @param buffer        holding the frames.
     * @param offset        index of the first frame.
     * @param length        bytes of frames (a padding frame contributes only its header).
     * @param startPosition log position of the first frame.
     * @param endPosition   log position after the last frame.
     */
    void onBlock(DirectBuffer buffer, int offset, int length, long startPosition, long endPosition);
}
