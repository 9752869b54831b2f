package io.lockstep.consensus;

import io.lockstep.archive.ArchiveException;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Install-snapshot, both ends: a leader streams its newest snapshot to a follower whose next entry it has purged; a
 * follower takes the chunks in order into its snapshot storage. Others keep the decisions (the leader's replication
 * who needs a snapshot; the consensus agent terms and identity; {@link SnapshotInstaller} what a snapshot to start
 * from does to the log and the service); this class moves the bytes, and on the follower side decides only whether
 * an offer needs them at all (see {@link #receive}), as that depends on its storage.
 * <p>
 * Leader side: a few chunks in flight per follower and at most {@link #CHUNKS_PER_CYCLE} sent per duty cycle, so
 * the others' replication is not held up; chunks not acknowledged within a heartbeat interval are sent again from
 * the last acknowledged offset. Follower side: a chunk out of order is answered with the offset wanted, one of
 * another file (position, length, snapshot term, leader or its term not those the install began with) with -1:
 * start again; the whole snapshot is checked by the storage before it is recorded.
 */
final class SnapshotTransfer
{
    private static final System.Logger LOGGER = System.getLogger(SnapshotTransfer.class.getName());
    static final int CHUNKS_IN_FLIGHT = 4;
    static final int CHUNKS_PER_CYCLE = 2;

    private final MemberProtocolPublisher publisher;
    private final int memberId;
    private final UnsafeBuffer chunkBuffer;
    private SnapshotStorage storage;
    /**
     * Room kept free beside a snapshot being received, for the log and the rest of the data directory to go on: a
     * snapshot that would leave less is not taken, and the follower stays up without it.
     */
    static final long INSTALL_HEADROOM_BYTES = 64L * 1024 * 1024;
    /** The kind under which a refused snapshot is recorded ({@code tool errors}). */
    static final String SNAPSHOT_REFUSED = "snapshot-refused";

    private long installingPosition = -1;
    /**
     * The snapshot last refused ({@link #refuse}: no room on disk or in the heap, or a chunk that found no space), or
     * -1: its later chunks are answered 0.
     */
    private long refusedPosition = -1;
    private long refusedLength;
    private long installReceived;
    /** What the install under way was begun with: a chunk that says otherwise starts it again. */
    private long installingLength;
    private long installingSnapshotTerm;
    private long installingLeaderTerm;
    private int installingLeader = -1;
    /** The last snapshot {@link #receive} returned was this member's own, not the leader's. */
    private boolean ownSnapshot;
    private final PeerProblems problems;

    /**
     * @param problems where a follower tells of a snapshot it refuses (null on a leader-only test's transfer).
     */
    SnapshotTransfer(
        final MemberProtocolPublisher publisher, final int memberId, final int chunkBytes, final PeerProblems problems)
    {
        this.publisher = publisher;
        this.problems = problems;
        this.memberId = memberId;
        this.chunkBuffer = new UnsafeBuffer(new byte[chunkBytes]);
    }

    void storage(final SnapshotStorage storage)
    {
        this.storage = storage;
    }

    SnapshotStorage storage()
    {
        return storage;
    }

    // ----------------------------------------------------------------------------------------------- leader side

    /**
     * @return chunks sent.
     */
    int send(final PeerState peer, final long term, final long nowNs, final long heartbeatIntervalNs)
    {
        if (null == storage || storage.durablePosition() < 0)
        {
            return 0;
        }
        if (peer.installPosition != storage.durablePosition())
        {
            peer.installPosition = storage.durablePosition();
            peer.installTerm = storage.durableTerm();
            peer.installLength = storage.durableLength();
            peer.installOffset = 0;
            peer.installAcked = 0;
            LOGGER.log(System.Logger.Level.INFO, "member {0} sends snapshot at {1} ({2} bytes) to {3}, whose next " +
                "entry {4} is purged", memberId, peer.installPosition, peer.installLength, peer.id, peer.nextPosition);
        }
        if (nowNs - peer.lastSentNs >= heartbeatIntervalNs)
        {
            peer.installOffset = peer.installAcked;
        }
        int sent = 0;
        final long window = (long)CHUNKS_IN_FLIGHT * chunkBuffer.capacity();
        while (sent < CHUNKS_PER_CYCLE && (peer.installOffset < peer.installLength || 0 == peer.installLength) &&
            peer.installOffset - peer.installAcked < window)
        {
            final int read = storage.read(peer.installPosition, peer.installOffset, chunkBuffer, 0,
                chunkBuffer.capacity());
            if (read < 0)
            {
                // Deleted by retention meanwhile: the next cycle starts on the newer one.
                peer.installPosition = -1;
                return sent;
            }
            if (!publisher.installSnapshot(peer.id, term, memberId, peer.installPosition, peer.installTerm,
                peer.installOffset, peer.installLength, chunkBuffer, 0, read))
            {
                break;
            }
            peer.installOffset += read;
            peer.lastSentNs = nowNs;
            sent++;
            if (0 == read)
            {
                break;
            }
        }
        return sent;
    }

    /**
     * A follower's answer to chunks of the snapshot it is being sent.
     */
    void onResponse(final PeerState peer, final long position, final long nextOffset, final boolean installed)
    {
        if (position != peer.installPosition)
        {
            return;
        }
        if (installed)
        {
            LOGGER.log(System.Logger.Level.INFO, "member {0}: member {1} installed the snapshot at {2}",
                memberId, peer.id, position);
            peer.installPosition = -1;
            peer.nextPosition = position;
            peer.appendedAck = Math.max(peer.appendedAck, position);
            peer.matchPosition = Math.max(peer.matchPosition, position);
            peer.resetSequence = peer.sequence;
        }
        else if (nextOffset < 0)
        {
            peer.installOffset = 0;
            peer.installAcked = 0;
        }
        else if (0 == nextOffset)
        {
            // The follower holds none of it (it has no room yet, or is writing a snapshot of its own): the next
            // attempt starts at the first chunk, after a heartbeat interval (the chunks in flight fill the window
            // until then), not at once and not from an offset the follower no longer holds.
            peer.installAcked = 0;
        }
        else
        {
            peer.installAcked = Math.max(peer.installAcked, nextOffset);
            peer.installOffset = Math.max(peer.installOffset, peer.installAcked);
        }
    }

    // --------------------------------------------------------------------------------------------- follower side

    /** @return true if the snapshot {@link #receive} last returned was this member's own newest, not the leader's. */
    boolean receivedOwnSnapshot()
    {
        return ownSnapshot;
    }

    /**
     * Take a chunk. Every outcome but the last is answered here; the caller answers "installed" once it has made
     * the log start at the snapshot.
     * <p>
     * A snapshot at or below the commit position is usually held already (a repeat after the install finished),
     * but not always: a log cut for a damaged frame below the leader's log start holds less than the commit says.
     * That member takes the leader's snapshot unless its own newest one reaches it; then it starts again from its
     * own, as from one installed (the caller restarts the log and the service there), and the leader sends the rest.
     * Installing the leader's over its own would record a snapshot at or below one already recorded (often under the
     * same file name, as every member snapshots at the same entries), and the store keeps them in log order only:
     * while a snapshot of its own is being written, chunks wait (answered, and sent again after a heartbeat
     * interval).
     *
     * @return the snapshot to start from, checked and durable: the leader's once its last chunk arrived, or this
     * member's own newest when it reaches the leader's (its position is then at or above {@code position}); else
     * null.
     */
    SnapshotStorage.Loaded receive(
        final FollowerLog followerLog,
        final long commitPosition,
        final int fromLeaderId,
        final long term,
        final long position,
        final long snapshotTerm,
        final long offset,
        final long totalLength,
        final DirectBuffer buffer,
        final int chunkOffset,
        final int chunkLength)
    {
        if (null == storage || position <= commitPosition && followerLog.holds(position))
        {
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, totalLength, null != storage);
            return null;
        }
        if (storage.isWriting())
        {
            storage.expedite(); // the leader's chunks wait for it
            // Answered, so that the leader keeps hearing from this member (check-quorum); it sends the chunk again.
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position,
                position == installingPosition ? installReceived : 0, false);
            return null;
        }
        if (position <= commitPosition && storage.durablePosition() >= position)
        {
            final SnapshotStorage.Loaded own = storage.loadLatest();
            if (null != own && own.image().logPosition() >= position)
            {
                storage.abortInstall(); // a half-received one of the leader's, if any: its file is not left open
                installingPosition = -1;
                ownSnapshot = true;
                LOGGER.log(System.Logger.Level.INFO, "member {0}: its log ends below the leader''s snapshot at " +
                    "{1}; it starts again from its own snapshot at {2}", memberId, position, own.image().logPosition());
                return own;
            }
        }
        if (0 == offset && !beginInstall(fromLeaderId, term, position, snapshotTerm, totalLength))
        {
            return null;
        }
        // Chunks of one file only: a later leader's snapshot at the same position may be another length, and a
        // leader that changed its mind mid-stream would otherwise leave a file the store cannot complete.
        final boolean sameInstall = position == installingPosition && totalLength == installingLength &&
            snapshotTerm == installingSnapshotTerm && term == installingLeaderTerm && fromLeaderId == installingLeader;
        if (!sameInstall || offset != installReceived)
        {
            final boolean refused = position == refusedPosition && totalLength == refusedLength;
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position,
                sameInstall ? installReceived : refused ? 0 : -1, false);
            return null;
        }
        if (!writeChunk(buffer, chunkOffset, chunkLength, fromLeaderId, term, position, totalLength))
        {
            return null;
        }
        installReceived += chunkLength;
        if (installReceived < totalLength)
        {
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, installReceived, false);
            return null;
        }
        installingPosition = -1;
        ownSnapshot = false;
        try
        {
            return storage.completeInstall();
        }
        catch (final ArchiveException ex)
        {
            // Damaged or incomplete: nothing is recorded, and what a leader sent is no reason to stop this member.
            problems.report(SNAPSHOT_REFUSED, "the snapshot from member " + fromLeaderId + " at " + position +
                " failed its checks, asking again: " + ex.getMessage());
            storage.abortInstall();
            publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, -1, false);
            return null;
        }
    }

    /**
     * Start receiving a snapshot at its first chunk, if there is room for it; if not, the leader is told to wait.
     *
     * @return true if the install began.
     */
    private boolean beginInstall(final int fromLeaderId, final long term, final long position,
        final long snapshotTerm, final long totalLength)
    {
        final String noRoom = whyNoRoomFor(totalLength, fromLeaderId, position);
        if (null != noRoom)
        {
            if (position != refusedPosition || totalLength != refusedLength)
            {
                // Said once per snapshot refused, not at each resend.
                problems.report(SNAPSHOT_REFUSED, noRoom + "; it asks again each heartbeat interval");
            }
            refuse(fromLeaderId, term, position, totalLength);
            return false;
        }
        refusedPosition = -1;
        storage.beginInstall(position, snapshotTerm, totalLength);
        installingPosition = position;
        installReceived = 0;
        installingLength = totalLength;
        installingSnapshotTerm = snapshotTerm;
        installingLeaderTerm = term;
        installingLeader = fromLeaderId;
        return true;
    }

    /** @return bytes the install under way holds on disk, which beginning another (or this one again) frees. */
    private long heldByInstall()
    {
        return installingPosition >= 0 ? installReceived : 0;
    }

    /**
     * @return false if there was no space for the chunk: the install is dropped and asked for again after a
     * heartbeat interval, when the room is looked at first.
     */
    private boolean writeChunk(final DirectBuffer buffer, final int chunkOffset, final int chunkLength,
        final int fromLeaderId, final long term, final long position, final long totalLength)
    {
        try
        {
            storage.installChunk(buffer, chunkOffset, chunkLength);
            return true;
        }
        catch (final ArchiveException ex)
        {
            // Refused as for want of room at the start: the leader is asked to wait a heartbeat interval (0), and
            // the chunks still in flight are answered the same way, not each with a restart.
            problems.report(SNAPSHOT_REFUSED, "the snapshot from member " + fromLeaderId + " at " + position +
                " could not be written, asking again: " + ex.getMessage());
            refuse(fromLeaderId, term, position, totalLength);
            return false;
        }
    }

    /**
     * Drop the install and remember the snapshot as refused: its later chunks are answered the same way. The answer
     * is 0, not -1, so that the leader sends the first chunk again after a heartbeat interval, not at once.
     */
    private void refuse(final int fromLeaderId, final long term, final long position, final long totalLength)
    {
        storage.abortInstall();
        installingPosition = -1;
        refusedPosition = position;
        refusedLength = totalLength;
        publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, 0, false);
    }

    /**
     * @return null if the store has room for a snapshot of this length and {@link #INSTALL_HEADROOM_BYTES} beside it,
     * or cannot tell; otherwise why not.
     */
    private String whyNoRoomFor(final long totalLength, final int fromLeaderId, final long position)
    {
        final String snapshot = "the snapshot from member " + fromLeaderId + " at " + position + " (" + totalLength +
            " bytes)";
        if (totalLength > storage.maxImageBytes())
        {
            // Read whole into the heap to be checked, it would stop the member (and again at each resend).
            return "refused " + snapshot + ": larger than this member reads into its heap (" +
                storage.maxImageBytes() + " bytes, at most half the heap); give members a heap of at least twice " +
                "the largest snapshot";
        }
        final long usable = storage.usableSpace();
        // What the install under way holds is freed when this one begins: a first chunk sent again is not refused
        // for the room its own first attempt took.
        if (usable < 0 || usable + heldByInstall() - INSTALL_HEADROOM_BYTES >= totalLength)
        {
            return null;
        }
        return "no room for " + snapshot + ": " + usable + " bytes usable, " + INSTALL_HEADROOM_BYTES +
            " kept free beside it";
    }
}
