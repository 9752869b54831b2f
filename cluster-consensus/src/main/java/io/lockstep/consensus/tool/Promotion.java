package io.lockstep.consensus.tool;

import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.PrintableText;
import io.lockstep.consensus.Membership;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.node.NodeConfig;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code tool promote --config FILE [--force]}: after the loss of the primary zone, the standbys (the members
 * listed {@code /nonvoting}) become the voting cluster. Steps, each printed:
 * <ol>
 *     <li>Refuse while the primary looks alive (any voting member answers, or a standby heard from a leader within
 *     two election timeouts), unless {@code --force}: a partition cannot be told apart from a dead zone, and
 *     promoting beside a live primary makes two clusters.</li>
 *     <li>Ask every standby for its log, the last commit position a primary leader told it and how fast that moved;
 *     say what may be lost, as a range ({@link LossEstimate}): what the primary had certainly committed beyond the
 *     most up-to-date standby's durable log, and the most it can have committed if it kept its rate while no standby
 *     heard from it (0 and 0 in synchronous mode). Each client is told exactly which of its acknowledged messages are
 *     gone ({@code SessionClient#lostAcknowledged}).</li>
 *     <li>Promote the most up-to-date standby to the next membership epoch, in which the standbys vote and the old
 *     members are removed; the other standbys learn it from that one and vote for it (no log among them is ahead
 *     of its), then are told directly too.</li>
 *     <li>Wait for the promoted cluster's leader to commit, and print the time from the command to that commit.</li>
 * </ol>
 * An old member that comes back and reaches a promoted one learns it was removed and stops (exit 3, with the reason).
 */
final class Promotion
{
    private static final long ASK_TIMEOUT_MS = 1_000;
    private static final long PRIMARY_CHECK_MS = 500;

    private final NodeConfig config;
    private final PrintStream out;
    private final PrintStream err;

    Promotion(final NodeConfig config, final PrintStream out, final PrintStream err)
    {
        this.config = config;
        this.out = out;
        this.err = err;
    }

    // Longer than the method bound: the promotion's steps in order, as the runbook lists them.
    @SuppressWarnings("checkstyle:MethodLength")
    int run(final boolean force, final long timeoutMs)
    {
        final long startNs = System.nanoTime();
        final List<Member> primaries = config.members().stream().filter(Member::voting).toList();
        final List<Member> standbys = config.members().stream().filter(m -> !m.voting()).toList();
        if (standbys.isEmpty())
        {
            err.println("lockstep tool: promote: the configuration lists no standby (a member marked /nonvoting)");
            return 2;
        }
        final String alive = primaryAlive(primaries);
        if (null != alive && !force)
        {
            err.println("lockstep tool: promote refused: " + alive + ". A partition cannot be told apart from a " +
                "dead zone, and promoting beside a live primary makes two clusters; run again with --force only " +
                "if you know the primary zone is gone");
            return 1;
        }
        long voters = 0;
        for (final Member m : standbys)
        {
            voters |= 1L << m.id();
        }
        try (AdminClient admin = new AdminClient(standbys, config.security().toolSecret(),
            config.security().tls().forTools()))
        {
            final List<AdminClient.PromoteAnswer> answers = new ArrayList<>();
            long epoch = 0;
            for (final Member m : standbys)
            {
                final AdminClient.PromoteAnswer a = admin.promote(m.id(), true, 0, 0, 0, ASK_TIMEOUT_MS);
                if (null == a)
                {
                    out.println("promote: standby=" + m.id() + " does not answer");
                    continue;
                }
                answers.add(a);
                epoch = Math.max(epoch, a.configEpoch());
                out.println("promote: standby=" + a.memberId() + " epoch=" + a.configEpoch() + " log_position=" +
                    a.durablePosition() + " last_term=" + a.lastTerm() + " primary_commit_seen=" +
                    a.primaryCommitSeen() + " since_leader_ms=" + (a.sinceLeaderNs() < 0 ? -1 :
                    TimeUnit.NANOSECONDS.toMillis(a.sinceLeaderNs())));
                if (null == alive && a.configEpoch() == 0 && a.sinceLeaderNs() >= 0 &&
                    a.sinceLeaderNs() < 2 * config.timeouts().electionTimeoutNs() && !force)
                {
                    err.println("lockstep tool: promote refused: standby " + a.memberId() + " heard from leader " +
                        a.leaderId() + " " + TimeUnit.NANOSECONDS.toMillis(a.sinceLeaderNs()) + " ms ago: the " +
                        "primary looks alive; run again with --force only if you know the primary zone is gone");
                    return 1;
                }
            }
            if (answers.isEmpty())
            {
                err.println("lockstep tool: promote: no standby answers: " +
                    (null == admin.lastProblem() ? "are they running?" : PrintableText.of(admin.lastProblem())));
                return 1;
            }
            AdminClient.PromoteAnswer best = answers.get(0);
            long primaryCommit = -1;
            long sinceLeaderNs = -1;
            long commitRate = 0;
            for (final AdminClient.PromoteAnswer a : answers)
            {
                primaryCommit = Math.max(primaryCommit, a.primaryCommitSeen());
                commitRate = Math.max(commitRate, a.primaryCommitRate());
                // The longest silence: the bound must hold whichever standby heard the primary last (a standby that
                // says it heard it a moment ago cannot shrink it).
                sinceLeaderNs = Math.max(sinceLeaderNs, a.sinceLeaderNs());
                if (a.lastTerm() > best.lastTerm() ||
                    (a.lastTerm() == best.lastTerm() && a.durablePosition() > best.durablePosition()))
                {
                    best = a;
                }
            }
            final boolean already = best.configEpoch() > 0 && (best.voters() & (1L << best.memberId())) != 0;
            final long newEpoch = already ? best.configEpoch() : epoch + 1;
            if (!already)
            {
                final LossEstimate loss = LossEstimate.of(config.standbySync(), answers.size() == standbys.size(),
                    primaryCommit, best.durablePosition(), sinceLeaderNs, commitRate);
                out.println("promote: " + loss.describe(best.meanEntryBytes(), best.memberId()));
            }
            final AdminClient.PromoteAnswer promoted = admin.promote(best.memberId(), false, newEpoch, voters, 0,
                ASK_TIMEOUT_MS);
            if (null == promoted || !promoted.accepted())
            {
                err.println("lockstep tool: promote: standby " + best.memberId() + " refused: " +
                    (null == promoted ? "no answer" : PrintableText.of(promoted.detail())));
                return 1;
            }
            out.println("promote: promoted=" + best.memberId() + " epoch=" + newEpoch + " voters=" +
                Membership.ids(voters) + " removed=" + Membership.ids(idsOf(primaries)));
            return awaitLeader(admin, standbys, newEpoch, voters, best.durablePosition(), startNs, timeoutMs);
        }
    }

    private int awaitLeader(
        final AdminClient admin, final List<Member> standbys, final long epoch, final long voters, final long floor,
        final long startNs, final long timeoutMs)
    {
        final long deadline = startNs + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline)
        {
            final Map<Integer, AdminClient.Status> statuses = admin.status(300);
            for (final AdminClient.Status s : statuses.values())
            {
                // The leader of the new epoch has committed once its commit passes the log it was promoted with.
                if (Role.LEADER == s.role() && Membership.epochOfTerm(s.term()) >= epoch && s.commitPosition() > floor)
                {
                    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                    for (final Member m : standbys)
                    {
                        // The others most likely learnt it from the leader already; told directly, to be sure.
                        admin.promote(m.id(), false, epoch, voters, 0, 500);
                    }
                    out.println("promote: leader=" + s.memberId() + " term=" + s.term() + " commit_position=" +
                        s.commitPosition() + " first_commit_ms=" + ms);
                    return 0;
                }
            }
        }
        err.println("lockstep tool: promote: no leader of epoch " + epoch + " committed within " + timeoutMs + " ms");
        return 1;
    }

    /** @return why the primary looks alive (a voting member answers), or null. */
    private String primaryAlive(final List<Member> primaries)
    {
        try (AdminClient admin = new AdminClient(primaries, config.security().toolSecret(),
            config.security().tls().forTools()))
        {
            // Half a second: a live member answers within a few round trips even across zones.
            for (final AdminClient.Status s : admin.status(PRIMARY_CHECK_MS).values())
            {
                return "primary member " + s.memberId() + " answers (role " + s.role().name().toLowerCase() +
                    ", term " + s.term() + ")";
            }
            return null;
        }
    }

    private static long idsOf(final List<Member> members)
    {
        long ids = 0;
        for (final Member m : members)
        {
            ids |= 1L << m.id();
        }
        return ids;
    }
}
