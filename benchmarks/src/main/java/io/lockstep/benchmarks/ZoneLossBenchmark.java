package io.lockstep.benchmarks;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.DevCertificates;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.consensus.tool.ClusterTool;
import io.lockstep.examples.EchoService;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The loss of a whole zone, end to end, as processes: three voting members and one warm standby reached through a
 * {@code DelayProxy} (a cross-zone link, 5 ms each way unless {@code --delay-ms}), a client sending numbered echo
 * messages; every primary member is SIGKILLed at once, {@code tool promote} runs against the standby, and the
 * client resumes its session there. Per run it prints the promotion command's time to the promoted cluster's first
 * commit, the client-observed outage (the longest silence between echoes from the kill on), and how many acknowledged
 * messages were lost (the client's own exact count) and duplicated.
 * With {@code --cut-link} the link to the standby zone is cut at the same instant, dropping what is in flight on it
 * (without it, bytes the primary sent before dying still arrive, as packets already on a wire do).
 * With {@code --tls} the links to and between standbys are TLS 1.3 ({@code lockstep.tls.links=standby}, a development
 * certificate made for the run).
 * {@code ZoneLossBenchmark [--runs 5] [--mode sync|async] [--rate 1000] [--delay-ms 5] [--cut-link] [--tls]}
 */
public final class ZoneLossBenchmark
{
    private static final Pattern FIRST_COMMIT = Pattern.compile("first_commit_ms=(\\d+)");
    private static final Pattern LOST_BYTES = Pattern.compile("(lost_bytes_at_least=\\d+ lost_bytes_at_most=\\w+)");

    private ZoneLossBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Logger.getLogger("io.lockstep").setLevel(Level.WARNING);
        int runs = 5;
        String mode = "sync";
        int rate = 1000;
        long delayMs = 5;
        boolean cutLink = false;
        boolean tls = false;
        for (int i = 0; i < args.length; i += 2)
        {
            if ("--cut-link".equals(args[i]) || "--tls".equals(args[i]))
            {
                cutLink |= "--cut-link".equals(args[i]);
                tls |= "--tls".equals(args[i]);
                i--;
                continue;
            }
            if (i + 1 >= args.length)
            {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            switch (args[i])
            {
                case "--runs" -> runs = Integer.parseInt(args[i + 1]);
                case "--mode" -> mode = args[i + 1];
                case "--rate" -> rate = Integer.parseInt(args[i + 1]);
                case "--delay-ms" -> delayMs = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i] +
                    " (--runs N --mode sync|async --rate R --delay-ms D --cut-link --tls)");
            }
        }
        if (!"sync".equals(mode) && !"async".equals(mode))
        {
            throw new IllegalArgumentException("--mode is sync or async, not " + mode);
        }
        System.out.printf("zone loss: 3 voting members and 1 standby behind a %d ms each-way delay proxy, %s " +
            "standby mode%s, %d echo messages/s, every primary SIGKILLed%s, then tool promote; %d runs%n", delayMs,
            mode, tls ? ", standby links TLS 1.3" : "", rate,
            cutLink ? " and what is in flight on the zone link dropped" : "", runs);
        long lostTotal = 0;
        for (int r = 1; r <= runs; r++)
        {
            lostTotal += run(r, "sync".equals(mode), rate, delayMs, cutLink, tls);
        }
        System.out.printf(Locale.ROOT, "lockstep mode=zone_loss standby=%s tls=%s runs=%d acknowledged_lost_total=%d%n",
            mode, tls, runs, lostTotal);
    }

    private static long run(
        final int runNo, final boolean sync, final int rate, final long delayMs, final boolean cutLink,
        final boolean tls) throws Exception
    {
        final Path root = Files.createTempDirectory("lockstep-zone-loss");
        try (LocalCluster cluster = new LocalCluster(root, 4, 1, sync ? "batch" : "none", 64 * 1024 * 1024,
            EchoService.class.getName()))
        {
            cluster.configureAll("lockstep.standby.sync", String.valueOf(sync));
            cluster.delayStandbys(delayMs);
            if (tls)
            {
                final Path dir = root.resolve("tls");
                DevCertificates.write(dir, List.of("127.0.0.1", "localhost"));
                cluster.configureAll("lockstep.tls.links", "standby");
                cluster.configureAll("lockstep.tls.certificate.file", dir.resolve(DevCertificates.CERTIFICATE)
                    .toString());
                cluster.configureAll("lockstep.tls.key.file", dir.resolve(DevCertificates.KEY).toString());
                cluster.configureAll("lockstep.tls.trust.file", dir.resolve(DevCertificates.AUTHORITY).toString());
            }
            for (int i = 0; i < 4; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                if (admin.awaitLeader(20_000) < 0)
                {
                    throw new IllegalStateException("no leader within 20 s");
                }
            }
            final BitSet echoed = new BitSet();
            final long[] duplicates = { 0 };
            final long[] lastEchoNs = { 0 };
            final long[] longestGapNs = { 0 };
            final boolean[] measuring = { false };
            final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
            try (ClusterClient client = ClusterClient.connect(cluster.members(), (s, q, b, o, l) ->
            {
                final int id = b.getInt(o);
                duplicates[0] += echoed.get(id) ? 1 : 0;
                echoed.set(id);
                final long now = System.nanoTime();
                if (measuring[0])
                {
                    longestGapNs[0] = Math.max(longestGapNs[0], now - lastEchoNs[0]);
                }
                lastEchoNs[0] = now;
            }))
            {
                if (!client.awaitConnected(20_000))
                {
                    throw new IllegalStateException("no session within 20 s");
                }
                final long intervalNs = TimeUnit.SECONDS.toNanos(1) / rate;
                final int[] next = { 0 };
                drive(client, message, next, intervalNs, TimeUnit.SECONDS.toNanos(2));
                final long lastEchoBeforeKill = lastEchoNs[0];
                measuring[0] = true;
                if (cutLink)
                {
                    cluster.cutStandbyLinks();
                }
                cluster.killTogether(0, 1, 2);
                final ByteArrayOutputStream out = new ByteArrayOutputStream();
                final ByteArrayOutputStream err = new ByteArrayOutputStream();
                final int[] exit = { -1 };
                final Thread tool = new Thread(() -> exit[0] = ClusterTool.run(
                    new String[]{ "promote", "--config", cluster.config(3).toString() },
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true,
                    StandardCharsets.UTF_8)), "promote");
                tool.start();
                // The client keeps sending through the outage, as a gateway would.
                while (tool.isAlive())
                {
                    drive(client, message, next, intervalNs, TimeUnit.MILLISECONDS.toNanos(20));
                }
                final String output = out.toString(StandardCharsets.UTF_8);
                if (0 != exit[0])
                {
                    throw new IllegalStateException("tool promote failed:\n" + output + err);
                }
                awaitEchoAfter(client, message, next, intervalNs, lastEchoNs, lastEchoBeforeKill);
                drive(client, message, next, intervalNs, TimeUnit.SECONDS.toNanos(1));
                final long acked = client.isClosed() ? client.acknowledgedSequence() : settle(client, echoed, next[0]);
                final long lost = client.isClosed() ? client.lostAcknowledged() : next[0] - echoed.cardinality();
                System.out.printf(Locale.ROOT, "run %d: promote_to_first_commit_ms=%s outage_ms=%s sent=%d " +
                    "acknowledged=%d acknowledged_lost=%d duplicated=%d tool: %s%s%n", runNo,
                    group(FIRST_COMMIT, output), client.isClosed() ? "-" :
                    String.valueOf(TimeUnit.NANOSECONDS.toMillis(longestGapNs[0])),
                    next[0], acked + 1, lost, duplicates[0], group(LOST_BYTES, output),
                    client.isClosed() ? " (session closed: " + client.closeReason() + ")" : "");
                if (client.isClosed() && Boolean.getBoolean("lockstep.zoneloss.debug"))
                {
                    System.out.println(output + "\n---- member 3:\n" + cluster.output(3));
                }
                return lost;
            }
        }
        finally
        {
            TempDirs.deleteTree(root);
        }
    }

    private static void drive(
        final ClusterClient client, final UnsafeBuffer message, final int[] next, final long intervalNs,
        final long forNs)
    {
        final long start = System.nanoTime();
        long nextSend = start;
        while (System.nanoTime() - start < forNs && !client.isClosed())
        {
            if (System.nanoTime() >= nextSend)
            {
                message.putInt(0, next[0]);
                if (client.offer(message, 0, message.capacity()) >= 0)
                {
                    next[0]++;
                }
                nextSend += intervalNs;
            }
            client.poll();
        }
    }

    private static void awaitEchoAfter(
        final ClusterClient client, final UnsafeBuffer message, final int[] next, final long intervalNs,
        final long[] lastEchoNs, final long before)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (lastEchoNs[0] == before && !client.isClosed())
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("no echo within 30 s of the promotion");
            }
            drive(client, message, next, intervalNs, TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** Poll until everything sent is acknowledged and echoed (or 20 s): @return the acknowledged sequence. */
    private static long settle(final ClusterClient client, final BitSet echoed, final int sent)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline && !client.isClosed() &&
            (client.acknowledgedSequence() < sent - 1 || echoed.cardinality() < sent))
        {
            client.poll();
        }
        return client.acknowledgedSequence();
    }

    private static String group(final Pattern pattern, final String text)
    {
        final Matcher m = pattern.matcher(text);
        return m.find() ? m.group(1) : "?";
    }
}
