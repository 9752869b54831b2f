package io.lockstep.cluster;

import org.agrona.DirectBuffer;

/**
 * Takes a service's state as a stream of fragments, during {@link ClusteredService#onTakeSnapshot}. The snapshot
 * becomes usable only once complete and durable.
 */
public interface SnapshotWriter
{
    /**
     * @param buffer holding the fragment.
     * @param offset index of the fragment.
     * @param length length, at most {@link #maxFragmentLength()}.
     */
    void append(DirectBuffer buffer, int offset, int length);

    /**
     * @return the largest fragment {@link #append} takes: split larger state.
     */
    int maxFragmentLength();
}
