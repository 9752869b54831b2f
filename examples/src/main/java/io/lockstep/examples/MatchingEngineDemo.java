package io.lockstep.examples;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.matching.MatchingEngineService;
import io.lockstep.examples.matching.codecs.ExecType;
import io.lockstep.examples.matching.codecs.ExecutionReportDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderEncoder;
import io.lockstep.examples.matching.codecs.NewOrderEncoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * {@code bin/lockstep demo}: three member processes on loopback running the matching engine, one client sending a
 * steady flow of limit orders (up to 32 in flight) through its session, the leader killed with SIGKILL part-way
 * and restarted later. Prints orders/s and the p50/p99 round trip (order sent to its accept report) every second,
 * the failover and its time, and ends with a line scripts can read:
 * {@code demo summary: sent=N acked=N lost=N duplicated=N failover_ms=N}. Lost and duplicated must be 0: the
 * session resumes on the new leader, resends what was not acknowledged, and the cluster applies each order once.
 */
public final class MatchingEngineDemo
{
    private static final int WINDOW = 32;
    private static final int MAX_ORDERS = 1 << 21;

    private final long[] sentAtNs = new long[MAX_ORDERS];
    private final byte[] acks = new byte[MAX_ORDERS];
    private final long[] latencies = new long[1 << 20];
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final ExecutionReportDecoder report = new ExecutionReportDecoder();
    private long acked;
    private long duplicated;
    private int inSecond;
    private long killedAtNs;
    private long failoverMs = -1;

    private MatchingEngineDemo()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        int durationS = 30;
        for (int i = 0; i < args.length; i++)
        {
            if ("--duration".equals(args[i]) && i + 1 < args.length)
            {
                durationS = Integer.parseInt(args[++i]);
            }
            else
            {
                System.err.println("usage: lockstep demo [--duration SECONDS]");
                System.exit(2);
            }
        }
        if (durationS < 6)
        {
            System.err.println("lockstep demo: --duration must be at least 6 seconds");
            System.exit(2);
        }
        final Path root = Files.createTempDirectory("lockstep-demo");
        int exit;
        try (LocalCluster cluster = new LocalCluster(root, 3, "batch", 4 * 1024 * 1024,
            MatchingEngineService.class.getName()))
        {
            // Segments and snapshot interval small enough that automatic snapshots and log purges happen in a demo.
            cluster.configureAll("lockstep.snapshot.interval.bytes", Integer.toString(8 << 20));
            exit = new MatchingEngineDemo().run(cluster, durationS);
        }
        finally
        {
            try (Stream<Path> paths = Files.walk(root))
            {
                for (final Path p : paths.sorted(Comparator.reverseOrder()).toList())
                {
                    Files.deleteIfExists(p);
                }
            }
        }
        System.exit(exit);
    }

    private int run(final LocalCluster cluster, final int durationS) throws Exception
    {
        System.out.println("lockstep demo: 3 members on loopback running the matching engine (timeouts lan, " +
            "durability batch: every commit synced to disk before it is acknowledged); one client session sending " +
            "limit orders");
        for (int i = 0; i < 3; i++)
        {
            cluster.start(i);
        }
        final Random random = new Random(7);
        final UnsafeBuffer order = new UnsafeBuffer(new byte[64]);
        final NewOrderEncoder encoder = new NewOrderEncoder();
        final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        long sent = 0;
        int killed = -1;
        boolean replicasAgree = false;
        try (AdminClient admin = cluster.adminClient();
            ClusterClient client = ClusterClient.connect(cluster.members(), this::onEgress))
        {
            if (!client.awaitConnected(20_000))
            {
                System.out.println("lockstep demo: could not open a session in 20 s");
                return 1;
            }
            final long start = System.nanoTime();
            final long end = start + TimeUnit.SECONDS.toNanos(durationS);
            final long killAt = start + TimeUnit.SECONDS.toNanos(durationS) * 2 / 5;
            final long restartAt = start + TimeUnit.SECONDS.toNanos(durationS) * 3 / 5;
            long second = start + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() < end && sent < MAX_ORDERS)
            {
                final long now = System.nanoTime();
                if (killed < 0 && now >= killAt)
                {
                    killed = admin.awaitLeader(5_000);
                    System.out.printf("lockstep demo: killing leader %d (pid %d) with SIGKILL%n", killed,
                        cluster.pid(killed));
                    cluster.kill(killed);
                    killedAtNs = System.nanoTime();
                }
                if (killed >= 0 && cluster.pid(killed) < 0 && now >= restartAt)
                {
                    System.out.printf("lockstep demo: member %d leads now (the session moved to it); restarting " +
                        "member %d on its data directory%n", client.leaderId(), killed);
                    cluster.start(killed);
                }
                if (sent - acked < WINDOW)
                {
                    encoder.wrapAndApplyHeader(order, 0, headerEncoder)
                        .clientOrderId(sent).instrument(1).side(random.nextBoolean() ? OrderSide.BUY : OrderSide.SELL)
                        .price(95 + random.nextInt(11)).quantity(1 + random.nextInt(10));
                    sentAtNs[(int)sent] = System.nanoTime();
                    if (client.offer(order, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()) >= 0)
                    {
                        sent++;
                    }
                }
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(10_000);
                }
                if (System.nanoTime() >= second)
                {
                    Arrays.sort(latencies, 0, inSecond);
                    System.out.printf("t=%2ds orders/s=%6d p50_us=%6d p99_us=%7d acked=%d%n",
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), inSecond,
                        inSecond > 0 ? latencies[inSecond / 2] / 1000 : 0,
                        inSecond > 0 ? latencies[(int)(inSecond * 0.99)] / 1000 : 0, acked);
                    inSecond = 0;
                    second += TimeUnit.SECONDS.toNanos(1);
                }
            }
            if (killed >= 0 && cluster.pid(killed) < 0)
            {
                cluster.start(killed);
            }
            final long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (acked < sent && System.nanoTime() < drainDeadline)
            {
                if (0 == client.poll())
                {
                    LockSupport.parkNanos(10_000);
                }
            }
            final long snapshotAt = admin.snapshot(30_000);
            System.out.printf("lockstep demo: snapshot asked for by the tool is durable on the leader at position %d%n",
                snapshotAt);
            replicasAgree = printReplicas(admin);
        }
        final long lost = sent - acked;
        System.out.printf("demo summary: sent=%d acked=%d lost=%d duplicated=%d failover_ms=%d replicas_agree=%b%n",
            sent, acked, lost, duplicated, failoverMs, replicasAgree);
        return 0 == lost && 0 == duplicated && replicasAgree ? 0 : 1;
    }

    /**
     * Wait until every member has applied the same position, then show what each holds: same position, same hash.
     */
    private static boolean printReplicas(final AdminClient admin)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Map<Integer, AdminClient.Status> statuses = admin.status(500);
        while (System.nanoTime() < deadline && (statuses.size() < 3 ||
            statuses.values().stream().map(AdminClient.Status::appliedPosition).distinct().count() != 1 ||
            statuses.values().stream().anyMatch(st -> st.appliedPosition() != st.logPosition())))
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            statuses = admin.status(500);
        }
        for (final AdminClient.Status st : statuses.values())
        {
            System.out.printf("member=%d role=%s applied_position=%d log_start_position=%d snapshot_position=%d " +
                "state_hash=%016x%n", st.memberId(), st.role().name().toLowerCase(Locale.ROOT),
                st.appliedPosition(), st.logStartPosition(), st.snapshotPosition(), st.stateHash());
        }
        return statuses.size() == 3 &&
            statuses.values().stream().map(AdminClient.Status::appliedPosition).distinct().count() == 1 &&
            statuses.values().stream().map(AdminClient.Status::stateHash).distinct().count() == 1;
    }

    private void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        header.wrap(buffer, offset);
        if (header.templateId() != ExecutionReportDecoder.TEMPLATE_ID)
        {
            return;
        }
        report.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final ExecType type = report.execType();
        if (ExecType.ACCEPTED != type && ExecType.REJECTED != type)
        {
            return;
        }
        final int id = (int)report.clientOrderId();
        if (acks[id]++ > 0)
        {
            duplicated++;
            return;
        }
        acked++;
        final long now = System.nanoTime();
        if (inSecond < latencies.length)
        {
            latencies[inSecond++] = now - sentAtNs[id];
        }
        if (killedAtNs > 0 && failoverMs < 0 && sentAtNs[id] > killedAtNs)
        {
            failoverMs = TimeUnit.NANOSECONDS.toMillis(now - killedAtNs);
            System.out.printf("lockstep demo: an order sent after the kill was accepted %d ms after it%n", failoverMs);
        }
    }
}
