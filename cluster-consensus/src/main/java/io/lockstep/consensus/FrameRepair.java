package io.lockstep.consensus;

import io.lockstep.archive.ArchiveException;
import io.lockstep.consensus.codecs.Role;

/**
 * A damaged frame met while the member runs (a bit flipped on its disk, a write the disk lost), by any reader of its
 * log: the service applying it, the leader sending it, a backup. The reader stops before the frame
 * ({@link RaftLog#damagedAt()}) rather than fail, and the member repairs it from the other members without stopping:
 * <ul>
 * <li>a follower cuts its log at the damaged frame and the leader sends it the rest again, as it would to any
 * follower that fell behind. The log's promise stays where it was, so until the frames are back the member neither
 * stands for election nor votes as if its log were shorter than what it acknowledged ({@link LogOrder}); its commit
 * position stays too (a fact it learned, not a claim on its log), and its service waits at the cut. If the leader
 * has purged that log under a snapshot, it comes back as a snapshot instead (see {@link SnapshotTransfer#receive});
 * </li>
 * <li>a leader cannot cut its own log while it leads, so it first hands leadership to the live follower that holds
 * the most, if that one already holds the damaged frame, and repairs as a follower. When no live follower does (it
 * would need the very frame the leader cannot send), it steps down instead, and an election decides: a transfer
 * could never finish, and a leader that kept trying would take no new entries meanwhile.</li>
 * </ul>
 * The member never exits for a damaged frame another member holds. One it alone holds (the only copy of a
 * committed entry) cannot be repaired here: recovery at the next start names it.
 */
final class FrameRepair
{
    private static final System.Logger LOGGER = System.getLogger(FrameRepair.class.getName());

    private final int memberId;
    private final RaftLog log;
    private final FollowerLog followerLog;
    private final FollowerAcks acks;
    private final LeaderReplication leader;
    private final MemberMetrics metrics;
    private final MemberErrors errors;
    private final Runnable stepDown;
    private long handOverAskedFor = -1;

    FrameRepair(
        final int memberId,
        final RaftLog log,
        final FollowerLog followerLog,
        final FollowerAcks acks,
        final LeaderReplication leader,
        final MemberMetrics metrics,
        final MemberErrors errors,
        final Runnable stepDown)
    {
        this.stepDown = stepDown;
        this.memberId = memberId;
        this.log = log;
        this.followerLog = followerLog;
        this.acks = acks;
        this.leader = leader;
        this.metrics = metrics;
        this.errors = errors;
    }

    /**
     * @param role  this member's role.
     * @param nowNs this duty cycle's time.
     * @return work done (1 if the log was cut for repair).
     */
    int onDutyCycle(final Role role, final long nowNs)
    {
        final long at = log.damagedAt();
        if (at < 0 || Role.CANDIDATE == role)
        {
            // A candidate asked for votes with the log it holds: cut now, it could win and lead with less than it
            // claimed. It repairs once the election is over (as leader, by handing over first).
            return 0;
        }
        if (Role.LEADER == role)
        {
            if (!leader.transferring())
            {
                if (handOverAskedFor != at)
                {
                    handOverAskedFor = at;
                    errors.record("disk", "member " + memberId + " found a damaged frame while leading: " +
                        log.damage() + "; it hands leadership over and fetches the frame again as a follower");
                }
                if (leader.mayHandOver(nowNs, at))
                {
                    leader.handOver(nowNs, LeaderReplication.HANDOVER_DAMAGED_FRAME);
                }
                else
                {
                    LOGGER.log(System.Logger.Level.WARNING, "member {0} steps down: a frame of its log is damaged " +
                        "({1}) and no live follower holds that frame", memberId, log.damage());
                    stepDown.run();
                    return 1;
                }
            }
            return 0;
        }
        if (at >= log.pendingPosition() || at < log.startPosition())
        {
            log.damageRepaired(at); // cut already (a conflict, a reset), or purged with the log below a snapshot
            return 0;
        }
        final String damage = log.damage();
        final long cut;
        try
        {
            cut = followerLog.cutDamaged(at);
        }
        catch (final ArchiveException | IllegalArgumentException ex)
        {
            if (ex instanceof ArchiveException && ArchiveException.Reason.NOT_FRAME_BOUNDARY !=
                ((ArchiveException)ex).reason())
            {
                throw ex;
            }
            // No frame starts there in the log as it is now: a finding about frames a cut has already replaced.
            log.damageRepaired(at);
            return 0;
        }
        acks.onTruncated(cut);
        log.damageRepaired(cut);
        metrics.increment(MemberMetrics.LOG_FRAMES_REPAIRED);
        errors.record("disk", "member " + memberId + " found a damaged frame: " + damage + "; it cut its log at " +
            cut + " and fetches the rest again from the leader");
        LOGGER.log(System.Logger.Level.WARNING, "member {0} found a damaged frame ({1}): it cut its log at {2} and " +
            "fetches the rest again from the leader", memberId, damage, cut);
        handOverAskedFor = -1;
        return 1;
    }
}
