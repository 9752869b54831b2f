package io.lockstep.consensus.tool;

import io.lockstep.archive.ArchiveException;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.PrintableText;
import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.Membership;
import io.lockstep.consensus.codecs.MembershipAction;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.node.NodeConfig;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Operator commands against a running cluster, given any member's config file (for the members list):
 * <pre>
 *   status    --config FILE                       one line per member:
 *             member=ID role=leader|follower|candidate|down term=N log_position=N commit_position=N
 *             log_start_position=N snapshot_position=N applied_position=N state_hash=HEX
 *   append    --config FILE [--count N] [--size B]  append N entries of B bytes through the leader
 *   step-down --config FILE --to ID               hand leadership to member ID
 *   snapshot  --config FILE [--timeout-ms T]      the leader appends a snapshot action; prints
 *             snapshot_position=N once a snapshot at or after it is durable on the leader
 *   promote   --config FILE [--force]             after the loss of the primary zone: the standbys become the
 *             voting cluster (see Promotion for the steps and the lines it prints)
 *   add-member|remove-member|promote-member --config FILE --id N
 *             one membership change, committed as a log entry: add a member listed in lockstep.members as a
 *             non-voting member, remove a member, or make a caught-up non-voting member a voter
 * </pre>
 * Members at the same applied_position must show the same state_hash (services that implement
 * {@code ClusteredService#stateHash}); that is how an operator checks replicas against each other.
 * Exit 0 on success, 1 if the cluster did not do it, 2 for bad usage or config.
 */
public final class ClusterTool
{
    private ClusterTool()
    {
    }

    public static void main(final String[] args)
    {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Run one command in this process (for launchers and benchmarks): what {@code main} does, without exiting.
     *
     * @return the exit code main would exit with.
     */
    public static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        if (args.length > 0 && "replay".equals(args[0]))
        {
            return replay(args, out, err);
        }
        if (args.length < 3 || !"--config".equals(args[1]))
        {
            err.println("usage: lockstep tool status|append|step-down|snapshot|suspend|resume|shutdown|errors|backup|" +
                "promote|add-member|remove-member|promote-member " +
                "--config FILE [options]\n" +
                "       lockstep tool replay DATA_DIR --service CLASS [--to POSITION]");
            return 2;
        }
        final String misread = misreadOptions(args);
        if (null != misread)
        {
            err.println("lockstep tool: " + misread);
            return 2;
        }
        final NodeConfig config;
        try
        {
            config = NodeConfig.load(Path.of(args[2]), System.getProperties());
        }
        catch (final NodeConfig.ConfigException ex)
        {
            err.println("lockstep tool: config error: " + ex.getMessage());
            return 2;
        }
        final List<Member> members = config.members();
        if ("promote".equals(args[0]))
        {
            final int timeoutMs;
            try
            {
                timeoutMs = option(args, "--timeout-ms", 30_000);
            }
            catch (final IllegalArgumentException ex)
            {
                err.println("lockstep tool: " + ex.getMessage());
                return 2;
            }
            return new Promotion(config, out, err).run(Arrays.asList(args).contains("--force"), timeoutMs);
        }
        try (AdminClient client = new AdminClient(members, config.security().toolSecret(),
            config.security().tls().forTools()))
        {
            final int exit = "backup".equals(args[0]) ? backup(args, client, config, out, err) :
                command(args, client, members, out, err);
            if (1 == exit && null != client.lastProblem())
            {
                // Why nothing answered, when a member said: a wrong secret reads very differently from a dead member.
                // Escaped: it may hold a member's refusal as it came over the wire.
                err.println("lockstep tool: " + PrintableText.of(client.lastProblem()));
            }
            return exit;
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("lockstep tool: " + ex.getMessage());
            return 2;
        }
    }

    /** Options that stand alone; every other option is followed by its value. */
    private static final Set<String> FLAGS = Set.of("--force");
    /** Each command's options. */
    private static final Map<String, List<String>> OPTIONS = Map.ofEntries(
        Map.entry("status", List.of()), Map.entry("errors", List.of()),
        Map.entry("append", List.of("--count", "--size")), Map.entry("step-down", List.of("--to")),
        Map.entry("snapshot", List.of("--timeout-ms")), Map.entry("shutdown", List.of("--timeout-ms")),
        Map.entry("suspend", List.of("--timeout-ms")), Map.entry("resume", List.of("--timeout-ms")),
        Map.entry("add-member", List.of("--id", "--timeout-ms")),
        Map.entry("remove-member", List.of("--id", "--timeout-ms")),
        Map.entry("promote-member", List.of("--id", "--timeout-ms")),
        Map.entry("backup", List.of("--dir", "--member")), Map.entry("promote", List.of("--timeout-ms", "--force")));

    /**
     * A mistyped option must not be ignored: {@code append --cuont 3} would append one entry and exit 0.
     *
     * @return what the tool cannot read in the options after {@code --config FILE}, or null if it reads them all.
     */
    static String misreadOptions(final String[] args)
    {
        final List<String> known = OPTIONS.get(args[0]);
        if (null == known)
        {
            return "unknown command '" + args[0] + "'";
        }
        for (int i = 3; i < args.length; i++)
        {
            if (!known.contains(args[i]))
            {
                return args[0] + " does not take '" + args[i] + "'" + (known.isEmpty() ? ": it has no options" :
                    "; its options: " + String.join(", ", known));
            }
            if (!FLAGS.contains(args[i]) && ++i == args.length)
            {
                return args[i - 1] + " needs a value";
            }
        }
        return null;
    }

    /**
     * {@code backup --config FILE --dir DIR [--member ID]}.
     */
    private static int backup(
        final String[] args, final AdminClient client, final NodeConfig config, final PrintStream out,
        final PrintStream err)
    {
        final String dir = stringOption(args, "--dir");
        if (null == dir)
        {
            err.println("usage: lockstep tool backup --config FILE --dir DIR [--member ID]");
            return 2;
        }
        try
        {
            final String member = stringOption(args, "--member");
            return new Backup(client, config, out, err).run(Path.of(dir), null == member ? -1 :
                Integer.parseInt(member));
        }
        catch (final IOException | RuntimeException ex)
        {
            err.println("lockstep tool: backup failed: " + ex.getMessage());
            return 1;
        }
    }

    private static String stringOption(final String[] args, final String name)
    {
        for (int i = 3; i + 1 < args.length; i++)
        {
            if (name.equals(args[i]))
            {
                return args[i + 1];
            }
        }
        return null;
    }

    private static int command(
        final String[] args, final AdminClient client, final List<Member> members, final PrintStream out,
        final PrintStream err)
    {
        switch (args[0])
        {
            case "status":
                return status(client, members, out);
            case "append":
                return append(client, option(args, "--count", 1), option(args, "--size", 64), out);
            case "step-down":
                return stepDown(client, option(args, "--to", -1), out, err);
            case "snapshot":
                return snapshot(client, option(args, "--timeout-ms", 60_000), out, err);
            case "shutdown":
                return shutdown(client, members.size(), option(args, "--timeout-ms", 60_000), out, err);
            case "errors":
                return errors(client, members, out);
            case "add-member":
            case "remove-member":
            case "promote-member":
                return changeMembership(client, args[0], option(args, "--id", -1), option(args, "--timeout-ms", 30_000),
                    out, err);
            case "suspend":
            case "resume":
                return suspend(client, "suspend".equals(args[0]), option(args, "--timeout-ms", 10_000), out, err);
            default:
                err.println("lockstep tool: unknown command '" + args[0] + "'");
                return 2;
        }
    }

    private static int status(final AdminClient client, final List<Member> members, final PrintStream out)
    {
        final Map<Integer, AdminClient.Status> statuses = client.status(1000);
        int up = 0;
        for (final Member m : members)
        {
            final AdminClient.Status s = statuses.get(m.id());
            if (null == s)
            {
                out.printf("member=%d role=down term=-1 log_position=-1 commit_position=-1 log_start_position=-1 " +
                    "snapshot_position=-1 applied_position=-1 state_hash=0%n", m.id());
                continue;
            }
            up++;
            out.printf(Locale.ROOT, "member=%d role=%s term=%d log_position=%d commit_position=%d " +
                "log_start_position=%d snapshot_position=%d applied_position=%d state_hash=%016x%n", m.id(),
                s.role().name().toLowerCase(Locale.ROOT), s.term(), s.logPosition(), s.commitPosition(),
                s.logStartPosition(), s.snapshotPosition(), s.appliedPosition(), s.stateHash());
        }
        // The configuration and the standbys, as their leader sees them: their own lines, so scripts reading
        // member= lines are unaffected.
        for (final AdminClient.Status s : statuses.values())
        {
            if (Role.LEADER == s.role())
            {
                out.printf(Locale.ROOT, "membership leader=%d epoch=%d version=%d voters=%s learners=%s%n",
                    s.memberId(), s.configEpoch(), s.configVersion(), Membership.ids(s.voters()),
                    Membership.ids(s.learners()));
            }
            for (final AdminClient.PeerLag peer : s.peers())
            {
                if (!peer.voting())
                {
                    out.printf(Locale.ROOT, "standby=%d leader=%d match_position=%d lag_bytes=%d lag_ms=%d%n",
                        peer.memberId(), s.memberId(), peer.matchPosition(), peer.lagBytes(),
                        TimeUnit.NANOSECONDS.toMillis(peer.lagNs()));
                }
            }
        }
        return up > 0 ? 0 : 1;
    }

    /**
     * Each member's recent errors: a {@code member=} summary line, then one line per distinct error, most recently
     * seen first, the message last and quoted.
     */
    private static int errors(final AdminClient client, final List<Member> members, final PrintStream out)
    {
        final Map<Integer, AdminClient.Errors> all = client.errors(1000);
        for (final Member m : members)
        {
            final AdminClient.Errors e = all.get(m.id());
            if (null == e)
            {
                out.printf("member=%d status=down total_errors=-1 distinct=-1%n", m.id());
                continue;
            }
            out.printf("member=%d status=up total_errors=%d distinct=%d%n", m.id(), e.total(), e.recent().size());
            for (final MemberErrors.Entry entry : e.recent())
            {
                out.printf("member=%d kind=%s count=%d first=%s last=%s message=\"%s\"%n", m.id(),
                    PrintableText.oneLine(entry.kind()), entry.count(), Instant.ofEpochSecond(0, entry.firstEpochNs()),
                    Instant.ofEpochSecond(0, entry.lastEpochNs()),
                    PrintableText.oneLine(entry.message()).replace('"', '\''));
            }
        }
        return all.isEmpty() ? 1 : 0;
    }

    /**
     * Suspend or resume: prints {@code suspended_at=N} or {@code resumed_at=N}, the log position after the entry,
     * once the leader applied it.
     */
    private static int suspend(
        final AdminClient client, final boolean suspend, final int timeoutMs, final PrintStream out,
        final PrintStream err)
    {
        final long position = client.suspend(suspend, timeoutMs);
        if (position < 0)
        {
            err.println("lockstep tool: no leader confirmed the " + (suspend ? "suspend" : "resume") + " within " +
                timeoutMs + " ms (no leader, or members run without a service)");
            return 1;
        }
        out.printf("%s=%d%n", suspend ? "suspended_at" : "resumed_at", position);
        return 0;
    }

    private static int append(final AdminClient client, final int count, final int size, final PrintStream out)
    {
        if (count < 1 || size < 8 || size > 64 * 1024)
        {
            throw new IllegalArgumentException("--count must be >= 1 and --size in [8, 65536]");
        }
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[size]);
        final long start = System.nanoTime();
        long first = -1;
        long last = -1;
        int failed = 0;
        for (int i = 0; i < count; i++)
        {
            payload.putLong(0, i);
            final long position = client.append(payload, 0, size, 5000);
            if (position < 0)
            {
                failed++;
                continue;
            }
            first = first < 0 ? position : first;
            last = position;
        }
        out.printf("appended=%d failed=%d first_position=%d last_position=%d elapsed_ms=%d%n",
            count - failed, failed, first, last, (System.nanoTime() - start) / 1_000_000);
        return 0 == failed ? 0 : 1;
    }

    private static int stepDown(
        final AdminClient client, final int target, final PrintStream out, final PrintStream err)
    {
        final Map<Integer, AdminClient.Status> statuses = client.status(1000);
        // A deposed leader may still call itself one until it hears the new term: the newest term's leader leads.
        final AdminClient.Status leader = statuses.values().stream()
            .filter(s -> Role.LEADER == s.role()).max(Comparator.comparingLong(AdminClient.Status::term))
            .orElse(null);
        if (null == leader)
        {
            err.println("lockstep tool: no leader found");
            return 1;
        }
        if (leader.memberId() == target)
        {
            // Already where it was asked to go: done, as a script running this before maintenance expects.
            out.printf("leader=%d handing_over_to=%d already=true%n", leader.memberId(), target);
            return 0;
        }
        if (!client.transferLeadership(leader.memberId(), target, 2000))
        {
            err.println("lockstep tool: leader " + leader.memberId() + " refused to hand over to " + target);
            return 1;
        }
        out.printf("leader=%d handing_over_to=%d%n", leader.memberId(), target);
        return 0;
    }

    private static int snapshot(
        final AdminClient client, final int timeoutMs, final PrintStream out, final PrintStream err)
    {
        final long start = System.nanoTime();
        final long position = client.snapshot(timeoutMs);
        if (position < 0)
        {
            err.println("lockstep tool: no snapshot was confirmed durable by a leader within " + timeoutMs + " ms " +
                "(no leader, or members run without a service)");
            return 1;
        }
        out.printf("snapshot_position=%d elapsed_ms=%d%n", position, (System.nanoTime() - start) / 1_000_000);
        return 0;
    }

    /**
     * Orderly shutdown: the leader confirms its snapshot at the shutdown entry, then the tool waits until no member
     * answers any more (each stops once its own snapshot there is durable; the leader last).
     */
    private static int shutdown(
        final AdminClient client, final int memberCount, final int timeoutMs, final PrintStream out,
        final PrintStream err)
    {
        final long start = System.nanoTime();
        final long position = client.shutdown(timeoutMs);
        if (position < 0)
        {
            err.println("lockstep tool: no leader confirmed the shutdown snapshot within " + timeoutMs + " ms " +
                "(no leader, or members run without a service)");
            return 1;
        }
        final long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int running = memberCount;
        while (System.nanoTime() < deadline && (running = client.status(500).size()) > 0)
        {
            LockSupport.parkNanos(50_000_000L);
        }
        out.printf("shutdown_position=%d members_still_running=%d elapsed_ms=%d%n", position, running,
            (System.nanoTime() - start) / 1_000_000);
        if (running > 0)
        {
            err.println("lockstep tool: " + running + " member(s) still answer " + timeoutMs + " ms after the " +
                "shutdown was confirmed (each stops once its snapshot at the shutdown entry is durable; one that " +
                "was down or far behind never saw it)");
            return 1;
        }
        return 0;
    }

    /**
     * {@code replay DATA_DIR --service CLASS [--to POSITION]}: offline, nothing written to the source.
     * Exit 0 with the state hash; 1 if the target cannot be reached; 2 for a usage or class error.
     */
    private static int replay(final String[] args, final PrintStream out, final PrintStream err)
    {
        String service = null;
        long to = -1;
        for (int i = 2; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--service" -> service = args[i + 1];
                case "--to" -> to = Long.parseLong(args[i + 1]);
                default ->
                {
                    err.println("lockstep tool replay: unknown option '" + args[i] + "'");
                    return 2;
                }
            }
        }
        if (args.length < 4 || null == service)
        {
            err.println("usage: lockstep tool replay DATA_DIR --service CLASS [--to POSITION]");
            return 2;
        }
        final Path dataDir = Path.of(args[1]);
        final String serviceClass = service;
        try
        {
            Class.forName(serviceClass);
        }
        catch (final ClassNotFoundException ex)
        {
            err.println("lockstep tool replay: no class " + serviceClass + " on the class path");
            return 2;
        }
        try
        {
            final LogReplay.Result result = LogReplay.replay(dataDir, () -> ClusterNode.newService(serviceClass), to);
            out.printf(Locale.ROOT, "replay dir=%s service=%s from_snapshot=%d applied_position=%d log_end=%d " +
                "state_hash=%016x%n", dataDir, serviceClass, result.snapshotPosition(), result.appliedPosition(),
                result.logEnd(), result.stateHash());
            return 0;
        }
        catch (final IllegalArgumentException | IllegalStateException | IOException |
            ArchiveException ex)
        {
            err.println("lockstep tool replay: " + ex.getMessage());
            return 1;
        }
    }

    /**
     * {@code add-member|remove-member|promote-member --config FILE --id N}: one membership change through the
     * leader, printed once committed: {@code membership: <command> member=<id> position=<n>}.
     */
    private static int changeMembership(
        final AdminClient client, final String command, final int id, final int timeoutMs, final PrintStream out,
        final PrintStream err)
    {
        final MembershipAction action = switch (command)
        {
            case "add-member" -> MembershipAction.ADD_LEARNER;
            case "promote-member" -> MembershipAction.PROMOTE;
            default -> MembershipAction.REMOVE;
        };
        final long position = client.changeMembership(action, id, timeoutMs);
        if (position < 0)
        {
            err.println("lockstep tool: " + command + " " + id + " was refused or not committed within " + timeoutMs +
                " ms; the leader says why in `lockstep tool errors` (one change at a time; a member is promoted only " +
                "once it has caught up; only members listed in lockstep.members can be added)");
            return 1;
        }
        out.println("membership: " + command + " member=" + id + " position=" + position);
        return 0;
    }

    private static int option(final String[] args, final String name, final int fallback)
    {
        for (int i = 3; i < args.length - 1; i++)
        {
            if (name.equals(args[i]))
            {
                try
                {
                    return Integer.parseInt(args[i + 1]);
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException(name + " needs a whole number, not '" + args[i + 1] + "'");
                }
            }
        }
        if (fallback < 0)
        {
            throw new IllegalArgumentException(name + " is required");
        }
        return fallback;
    }
}
