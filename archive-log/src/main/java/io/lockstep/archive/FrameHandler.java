package io.lockstep.archive;

import org.agrona.DirectBuffer;

/**
 * Receives frames read from the log. The buffer is only valid during the call.
 */
@FunctionalInterface
public interface FrameHandler
{
    /**
     * @param buffer        holding the payload.
     * @param offset        index of the payload in the buffer.
     * @param length        length of the payload.
     * @param framePosition log position of the frame; the next frame starts at
     *                      {@code framePosition + FrameDescriptor.alignedFrameLength(length)}.
     * @param term          term in which the frame was appended.
     * @param frameType     type given at append.
     */
    void onFrame(DirectBuffer buffer, int offset, int length, long framePosition, long term, int frameType);
}
