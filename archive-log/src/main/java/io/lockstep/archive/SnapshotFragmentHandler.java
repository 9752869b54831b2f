package io.lockstep.archive;

import org.agrona.DirectBuffer;

/**
 * Receives the fragments of a snapshot in the order they were written. The buffer is only valid during the call.
 */
@FunctionalInterface
public interface SnapshotFragmentHandler
{
    /**
     * @param buffer holding the fragment.
     * @param offset index of the fragment in the buffer.
     * @param length length of the fragment.
     */
    void onFragment(DirectBuffer buffer, int offset, int length);
}
