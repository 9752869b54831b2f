package io.lockstep.consensus;

import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import org.agrona.DirectBuffer;

/**
 * A follower's side of install-snapshot, once the consensus agent has accepted the sender as its leader (term and
 * cluster identity checked, timers reset): the leader's committed configuration, whether this member's log can
 * confirm the snapshot, the chunks ({@link SnapshotTransfer#receive}), and what a snapshot to start from does to
 * the log, the acknowledgements and the service.
 */
final class SnapshotInstaller
{
    private final int memberId;
    private final Membership membership;
    private final FollowerLog followerLog;
    private final FollowerAcks acks;
    private final SnapshotTransfer transfer;
    private final MembershipExchange membershipExchange;
    private final MemberProtocolPublisher publisher;

    SnapshotInstaller(
        final int memberId,
        final Membership membership,
        final FollowerLog followerLog,
        final FollowerAcks acks,
        final SnapshotTransfer transfer,
        final MembershipExchange membershipExchange,
        final MemberProtocolPublisher publisher)
    {
        this.memberId = memberId;
        this.membership = membership;
        this.followerLog = followerLog;
        this.acks = acks;
        this.transfer = transfer;
        this.membershipExchange = membershipExchange;
        this.publisher = publisher;
    }

    /**
     * Take one chunk from the leader of {@code term}.
     *
     * @param chunk       the message, its fixed fields checked by the caller.
     * @param buffer      holding the chunk's bytes.
     * @param bytesOffset where they start ({@code chunk.chunkLength()} of them, checked to lie inside the message).
     * @param hooks       the service, or null if none is attached.
     * @return the commit position after the chunk: at least the position of the snapshot this member now starts
     * from, if it starts from one (the leader's, or its own reaching it); else {@code commitPosition}.
     */
    long onChunk(
        final InstallSnapshotDecoder chunk,
        final DirectBuffer buffer,
        final int bytesOffset,
        final long term,
        final long commitPosition,
        final ServiceHooks hooks)
    {
        final int fromLeaderId = chunk.leaderId();
        final long position = chunk.snapshotPosition();
        final long snapshotTerm = chunk.snapshotTerm();
        final long totalLength = chunk.totalLength();
        // What the snapshot's purged log no longer carries; taken only from the leader this member now follows.
        membership.onSnapshotConfiguration(chunk.configEpoch(), chunk.configVersion(), chunk.voters(),
            chunk.learners());
        if (position <= commitPosition && followerLog.cannotConfirm(position, snapshotTerm, commitPosition, term))
        {
            membershipExchange.onDiverged(position, commitPosition, fromLeaderId);
            return commitPosition;
        }
        final SnapshotStorage.Loaded loaded = transfer.receive(followerLog, commitPosition, fromLeaderId, term,
            position, snapshotTerm, chunk.chunkOffset(), totalLength, buffer, bytesOffset, chunk.chunkLength());
        if (null == loaded)
        {
            return commitPosition;
        }
        if (null != hooks)
        {
            hooks.beforeSnapshotInstall();
        }
        final long at = loaded.image().logPosition(); // the leader's snapshot, or this member's own reaching it
        followerLog.onSnapshotInstalled(at, loaded.image().term(), fromLeaderId, transfer.receivedOwnSnapshot());
        acks.onSnapshotInstalled(at);
        if (null != hooks)
        {
            hooks.onSnapshotInstalled(loaded);
        }
        publisher.installSnapshotResponse(fromLeaderId, term, memberId, position, totalLength, true);
        return Math.max(commitPosition, at);
    }
}
