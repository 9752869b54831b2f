package io.lockstep.standby;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.MemberMetrics;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.node.TlsSettings;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/lockstep standby --config FILE}: a warm standby. It is a member listed in {@code lockstep.members}
 * with {@code /nonvoting}: it receives the committed log, applies it to the same service (sessions, timers and
 * egress buffers too), takes its own snapshots and purges its own log, but never votes and never counts toward the
 * primary's quorum, so it can neither slow a commit nor stop one. A standby that falls more than 256 MiB behind
 * what the leader's snapshot covers no longer holds back the leader's log; it is sent the snapshot instead.
 * <p>
 * Every 5 s it prints what it knows of its own lag: {@code lockstep standby <id>: applied_position=<n>
 * commit_position=<n> behind_commit_bytes=<n> leader=<id>}. The leader's view, in bytes and time, is in
 * {@code tool status} ({@code standby=} lines) and in the leader's metrics ({@code lockstep_standby_lag_bytes},
 * {@code lockstep_standby_lag_ns}). After the loss of the primary zone, {@code tool promote} makes the standbys the
 * voting cluster (see {@code Promotion}); this process then runs on as a voting member.
 */
public final class StandbyNode
{
    private static final long REPORT_INTERVAL_MS = 5_000;

    private StandbyNode()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        TlsSettings.restrictKeyExchangeGroups();
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        if (args.length != 2 || !"--config".equals(args[0]))
        {
            System.err.println("usage: lockstep standby --config FILE   (keys can be overridden with -Dkey=value)");
            System.exit(2);
        }
        final NodeConfig config;
        try
        {
            config = NodeConfig.load(Path.of(args[1]), System.getProperties());
        }
        catch (final NodeConfig.ConfigException ex)
        {
            System.err.println("lockstep standby: config error: " + ex.getMessage());
            System.exit(2);
            return;
        }
        final Member self = config.members().stream().filter(m -> m.id() == config.memberId()).findFirst()
            .orElseThrow();
        if (self.voting())
        {
            System.err.println("lockstep standby: config error: member " + self.id() + " is a voting member in " +
                NodeConfig.MEMBERS + "; a standby is listed as " + self.id() + "=" + self.host() + ":" + self.port() +
                "/nonvoting");
            System.exit(2);
            return;
        }
        if (null == config.serviceClass())
        {
            System.err.println("lockstep standby: config error: a warm standby runs the service: set " +
                NodeConfig.SERVICE);
            System.exit(2);
            return;
        }
        ClusterNode.run(config, node ->
        {
            final Thread reporter = new Thread(() -> report(config.memberId(), node), "lockstep-standby-report");
            reporter.setDaemon(true);
            reporter.start();
        });
    }

    private static void report(final int memberId, final ClusterNode node)
    {
        while (sleep(REPORT_INTERVAL_MS))
        {
            final MemberMetrics m = node.metrics();
            final long applied = m.get(MemberMetrics.APPLIED_POSITION);
            final long commit = m.get(MemberMetrics.COMMIT_POSITION);
            System.out.printf(Locale.ROOT, "lockstep standby %d: applied_position=%d commit_position=%d " +
                "behind_commit_bytes=%d leader=%d%n", memberId, applied, commit, Math.max(0, commit - applied),
                m.get(MemberMetrics.LEADER_ID));
            System.out.flush();
        }
    }

    private static boolean sleep(final long ms)
    {
        try
        {
            TimeUnit.MILLISECONDS.sleep(ms);
            return true;
        }
        catch (final InterruptedException ex)
        {
            return false;
        }
    }
}
