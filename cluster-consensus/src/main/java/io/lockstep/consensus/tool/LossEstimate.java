package io.lockstep.consensus.tool;

import java.util.concurrent.TimeUnit;

/**
 * What a promotion may lose, as a range: the standbys only know what the lost primary had committed up to the last
 * commit position one of them heard, and the primary may have gone on committing after that, while the zone link was
 * down, until it died.
 *
 * @param atLeast bytes the primary had certainly committed beyond the promoted standby's durable log.
 * @param atMost  the most it can have committed beyond it, if it kept its recent commit rate for as long as no
 *                standby heard from it; -1 when that cannot be bounded (no rate seen, or no leader ever heard).
 * @param why     one sentence on where the figures come from.
 */
record LossEstimate(long atLeast, long atMost, String why)
{
    /**
     * @param synchronous       the cluster runs in synchronous standby mode.
     * @param everyStandby      every configured standby answered the promotion.
     * @param primaryCommitSeen the highest commit position any standby heard from a primary leader.
     * @param promotedDurable   the promoted standby's durable log end.
     * @param sinceLeaderNs     the longest time since a standby heard from a leader, or -1 if none ever did.
     * @param commitRate        the highest recent commit rate any standby saw, in bytes a second.
     */
    static LossEstimate of(
        final boolean synchronous,
        final boolean everyStandby,
        final long primaryCommitSeen,
        final long promotedDurable,
        final long sinceLeaderNs,
        final long commitRate)
    {
        final long atLeast = Math.max(0, primaryCommitSeen - promotedDurable);
        if (synchronous && everyStandby)
        {
            return new LossEstimate(atLeast, atLeast, "synchronous mode: the primary committed nothing a standby " +
                "had not made durable, and every standby answered");
        }
        if (sinceLeaderNs < 0)
        {
            return new LossEstimate(atLeast, -1, "no standby ever heard from a primary leader");
        }
        final long sinceMs = TimeUnit.NANOSECONDS.toMillis(sinceLeaderNs);
        if (commitRate <= 0)
        {
            return new LossEstimate(atLeast, -1, "no standby saw the primary's commit position move in its last " +
                "ten seconds of contact, " + sinceMs + " ms ago, so there is no rate to bound what it committed since");
        }
        final long sinceSeen = (long)Math.min(Long.MAX_VALUE / 2.0, commitRate * (sinceLeaderNs / 1e9));
        final long atMost = Math.max(atLeast, primaryCommitSeen + sinceSeen - promotedDurable);
        return new LossEstimate(atLeast, atMost, "the primary's commit position was last heard " + sinceMs +
            " ms ago, when it moved at up to " + commitRate + " bytes/s: at most that rate since" +
            (synchronous ? " (synchronous mode, but not every standby answered)" : ""));
    }

    /** @return the figures as {@code tool promote} prints them. */
    String describe(final long meanEntryBytes, final int promotedId)
    {
        return "lost_bytes_at_least=" + atLeast + " lost_bytes_at_most=" + (atMost < 0 ? "unknown" : atMost) +
            " lost_entries~=" + entries(atLeast, meanEntryBytes) + ".." +
            (atMost < 0 ? "unknown" : entries(atMost, meanEntryBytes)) + " (beyond standby " + promotedId +
            "'s durable log; " + why + "; each client reports its own acknowledged messages lost, if any)";
    }

    private static String entries(final long bytes, final long meanEntryBytes)
    {
        if (0 == bytes)
        {
            return "0";
        }
        return meanEntryBytes <= 0 ? "unknown" : String.valueOf((bytes + meanEntryBytes - 1) / meanEntryBytes);
    }
}
