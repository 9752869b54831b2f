package io.lockstep.consensus;

import io.lockstep.archive.BlockHandler;

/**
 * Whole frames of a member's log, read as blocks: what a service container applies from. A {@link RaftLog} is one
 * (its own reader, for the thread that writes it); {@link RaftLog#newBlockSource} gives a reader for another thread
 * (the DEDICATED service thread). Frames read must stay in the log while read: below the commit position (never
 * truncated) and above any purge. A log reset (a snapshot install) must not run while another thread's reader is
 * open.
 */
public interface BlockSource extends AutoCloseable
{
    /**
     * Hand whole frames from a position, up to a limit and about maxBytes, as one block.
     *
     * @return log bytes covered (0 if none available).
     */
    int readBlock(long position, long limitPosition, int maxBytes, BlockHandler handler);

    void close();
}
