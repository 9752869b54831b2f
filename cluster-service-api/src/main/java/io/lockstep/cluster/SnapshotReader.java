package io.lockstep.cluster;

import org.agrona.DirectBuffer;

/**
 * Hands a snapshot's fragments back in the order they were written, each checked before it is handed out.
 */
public interface SnapshotReader
{
    /**
     * Receives fragments.
     */
    @FunctionalInterface
    interface FragmentHandler
    {
        void onFragment(DirectBuffer buffer, int offset, int length);
    }

    /**
     * @param handler      receives each fragment; the buffer is valid only during the call.
     * @param maxFragments bound on fragments handed out in this call.
     * @return fragments handed out.
     */
    int poll(FragmentHandler handler, int maxFragments);

    /**
     * @return true once every fragment has been read.
     */
    boolean isDone();

    /**
     * Read exactly one fragment: for state written as a known sequence of fragments.
     *
     * @param handler receives it.
     * @throws IllegalStateException if the snapshot has no more fragments (it was written with fewer).
     */
    default void readOne(final FragmentHandler handler)
    {
        if (isDone() || 1 != poll(handler, 1))
        {
            throw new IllegalStateException("snapshot ends before a fragment its reader expected");
        }
    }
}
