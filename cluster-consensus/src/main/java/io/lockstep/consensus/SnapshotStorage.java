package io.lockstep.consensus;

import io.lockstep.archive.ArchiveException;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Where a member keeps its snapshots. Injected, like the log: the node writes files through archive-log's snapshot
 * store and recording log ({@code FileSnapshotStorage} in the storage package); the simulation keeps them in memory and
 * loses what a crash would lose.
 * <p>
 * Writing is asynchronous so that the services pause only to serialise state into a {@link SnapshotImage}: {@link
 * #write} hands the image over and returns at once; {@link #durablePosition()} moves when it is complete, durable and
 * recorded. A snapshot is streamed to other members as opaque bytes (its stored form, self-checking), and a
 * streamed-in snapshot is checked before it is used.
 */
public interface SnapshotStorage extends AutoCloseable
{
    /** A snapshot that was read, or installed, and passed its checks. */
    record Loaded(SnapshotImage image, String description)
    {
    }

    /**
     * @return true while a write is under way (a new one must wait).
     */
    boolean isWriting();

    /**
     * @return null, or why the last snapshot could not be written (no space left): nothing is lost, the log is kept
     * until a later snapshot is written.
     */
    default String writeProblem()
    {
        return null;
    }

    /**
     * Start writing an image durably. One at a time.
     */
    void write(SnapshotImage image);

    /**
     * Someone waits for the snapshot being written (a shutdown, a tool, a leader's snapshot chunks): a store that
     * delays its writes starts this one now. The default does nothing, which suits a store that writes at once.
     */
    default void expedite()
    {
    }

    /**
     * @return log position of the newest complete, durable, recorded snapshot; -1 if none.
     */
    long durablePosition();

    /**
     * @return term at {@link #durablePosition()}.
     */
    long durableTerm();

    /**
     * @return stored length of the newest durable snapshot, in bytes.
     */
    long durableLength();

    /**
     * Load the newest snapshot that passes its checks; a damaged one is reported (logged, naming it) and the one
     * before it is tried.
     *
     * @return the snapshot, or null if there is none.
     */
    Loaded loadLatest();

    /**
     * Read stored bytes of a snapshot, to stream it to another member.
     *
     * @return bytes read, or -1 if that snapshot is no longer kept.
     */
    int read(long logPosition, long offset, MutableDirectBuffer dst, int dstOffset, int maxLength);

    /**
     * Begin receiving a snapshot from the leader; drops any install under way.
     */
    void beginInstall(long logPosition, long term, long totalLength);

    /**
     * Take the next chunk of the snapshot being received, in order.
     *
     * @throws io.lockstep.archive.ArchiveException if there is no space for it: the install is then dropped and
     * asked for again.
     */
    void installChunk(DirectBuffer buffer, int offset, int length);

    /**
     * @return bytes free for this store's files, or -1 if unknown (then a snapshot of any size is taken). The default
     * is unknown, which suits a store in memory.
     */
    default long usableSpace()
    {
        return -1;
    }

    /**
     * @return the largest snapshot this store can read into memory, as it does to check one received and to load it;
     * the default, for a store whose images already are in memory, is no bound.
     */
    default long maxImageBytes()
    {
        return Long.MAX_VALUE;
    }

    /**
     * Drop the install under way, if any, and what it received: the member starts from a snapshot of its own
     * instead. Nothing recorded changes. The default does nothing, which suits a store whose next
     * {@link #beginInstall} drops an earlier install anyway and that holds nothing open meanwhile.
     */
    default void abortInstall()
    {
    }

    /**
     * Finish receiving: check it, make it durable and record it. Snapshots are recorded in log order only, each
     * position once (the newest recorded is the one a restart loads): an install at or below the newest recorded one
     * is refused.
     *
     * @return the snapshot, loaded.
     * @throws ArchiveException if it fails its checks (nothing is recorded).
     */
    Loaded completeInstall();

    /**
     * Keep the newest snapshots and delete the rest.
     *
     * @param keep how many to keep (at least 1).
     * @return log position of the oldest snapshot kept, or -1 if none.
     */
    long retain(int keep);

    void close();
}
