package io.lockstep.benchmarks;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import io.lockstep.consensus.service.EntryLogWriter;
import io.lockstep.consensus.service.ServiceContainer;
import io.lockstep.consensus.service.SessionTable;
import io.lockstep.consensus.service.TimerTable;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import io.lockstep.examples.matching.MatchingEngineService;
import io.lockstep.examples.matching.codecs.CancelOrderEncoder;
import io.lockstep.examples.matching.codecs.MessageHeaderEncoder;
import io.lockstep.examples.matching.codecs.NewOrderEncoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/lockstep bench snapshot [--orders N] [--churn K]}: the matching engine with N resting orders (default one
 * million), reached through a history where each resting order came with K orders entered and cancelled (default 2:
 * a log of 5 million orders and cancels), as a real book's history is mostly orders that no longer rest.
 * Measures the services' pause while a snapshot is taken (serialising into memory; the rest happens in the
 * background), the snapshot's size, the background write, and a member's restart with and without the snapshot:
 * open and recover the log, then either replay all of it or load the snapshot and replay the tail after it.
 * <p>
 * In process, no cluster: the container applies a log written straight to archive-log, as a member's container
 * does; what a restart adds beyond this (JVM start, elections) is the same either way.
 */
public final class SnapshotBenchmark
{
    private static final int TAIL_ORDERS = 10_000;
    private static final int EXTRA_SNAPSHOTS = 5;

    private SnapshotBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        int orders = 1_000_000;
        int churn = 2;
        for (int i = 0; i < args.length - 1; i++)
        {
            if ("--orders".equals(args[i]))
            {
                orders = Integer.parseInt(args[i + 1]);
            }
            else if ("--churn".equals(args[i]))
            {
                churn = Integer.parseInt(args[i + 1]);
            }
        }
        if (churn < 0 || churn > 100)
        {
            throw new IllegalArgumentException("--churn must be in [0, 100]");
        }
        if (orders < 1 || orders > MatchingEngineService.MAX_ORDERS_PER_BOOK)
        {
            throw new IllegalArgumentException("--orders must be in [1, " + MatchingEngineService.MAX_ORDERS_PER_BOOK +
                "]");
        }
        final Path dir = Files.createTempDirectory("lockstep-snapshot-bench");
        try
        {
            run(dir, orders, churn);
        }
        finally
        {
            TempDirs.deleteTree(dir);
        }
    }

    private static void run(final Path dir, final int orders, final int churn)
    {
        final ArchiveLogConfig logConfig = new ArchiveLogConfig().directory(dir.resolve("log"))
            .durability(DurabilityPolicy.NONE);
        ArchiveRaftLog log = new ArchiveRaftLog(logConfig);
        final EntryLogWriter writer = new EntryLogWriter(log, 1);
        writer.sessionOpen(0);
        final OrderSource source = new OrderSource();
        long sequence = 0;
        long churnId = 1L << 31;
        for (int i = 0; i < orders; i++)
        {
            writer.sessionMessage(1, sequence++, source.restingOrder(i), 0, source.length);
            for (int k = 0; k < churn; k++)
            {
                writer.sessionMessage(1, sequence++, source.order(churnId, (k & 1) == 0, 900 + k), 0, source.length);
                writer.sessionMessage(1, sequence++, source.cancel(churnId++), 0, source.length);
            }
        }
        writer.snapshotAction();
        for (int i = orders; i < orders + TAIL_ORDERS; i++)
        {
            writer.sessionMessage(1, sequence++, source.restingOrder(i), 0, source.length);
        }
        writer.flush();
        final long logBytes = log.appendedPosition();
        log.close();
        System.out.printf(Locale.ROOT, "log written: %d resting orders (with %d entered and cancelled), a snapshot " +
            "action, %d more orders: %d entries, %d bytes%n", orders, 2L * churn * orders, TAIL_ORDERS, sequence,
            logBytes);

        // Restart without a snapshot: recover the log, replay all of it.
        final List<Long> pausesNs = new ArrayList<>();
        final SnapshotImage[] image = new SnapshotImage[1];
        long start = System.nanoTime();
        log = new ArchiveRaftLog(logConfig);
        final MatchingEngineService full = new MatchingEngineService();
        final ServiceContainer fullContainer = container(full, log, log.startPosition());
        fullContainer.onSnapshotTaken((taken, pauseNs) ->
        {
            image[0] = taken;
            pausesNs.add(pauseNs);
        }, new SystemNanoClock());
        fullContainer.start(null);
        applyAll(fullContainer, log);
        final long fullReplayNs = System.nanoTime() - start - pausesNs.get(0);

        // The snapshot goes to disk in the background, as on a member.
        final long fileBytes;
        final long writeNs;
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir.resolve("member")))
        {
            storage.write(image[0]);
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (storage.durablePosition() != image[0].logPosition() && System.nanoTime() < deadline)
            {
                storage.isWriting();
                Thread.onSpinWait();
            }
            fileBytes = storage.durableLength();
            writeNs = storage.lastWriteNs();
        }

        // Restart with the snapshot: recover the log, load the newest snapshot, replay the tail.
        log.close();
        start = System.nanoTime();
        log = new ArchiveRaftLog(logConfig);
        final SnapshotStorage.Loaded loaded;
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir.resolve("member")))
        {
            loaded = storage.loadLatest();
        }
        final MatchingEngineService resumed = new MatchingEngineService();
        final ServiceContainer resumedContainer = container(resumed, log, loaded.image().logPosition());
        resumedContainer.startFrom(loaded.image());
        applyAll(resumedContainer, log);
        final long snapshotRestartNs = System.nanoTime() - start;
        if (resumed.stateHash() != full.stateHash())
        {
            throw new IllegalStateException("the restarted engine differs from the one that replayed everything");
        }

        // More snapshots of the full book, for the spread of the pause once the code is warm.
        final EntryLogWriter more = new EntryLogWriter(log, 1);
        for (int i = 0; i < EXTRA_SNAPSHOTS; i++)
        {
            more.snapshotAction();
        }
        more.flush();
        resumedContainer.onSnapshotTaken((taken, pauseNs) -> pausesNs.add(pauseNs), new SystemNanoClock());
        // Two images alternated, as a member does (ServiceMember): memory is reused, not allocated per snapshot.
        final SnapshotImage[] pool = { image[0], null };
        final int[] next = { 0 };
        resumedContainer.imageSource((position, term, timestamp, sizeHint) ->
        {
            final int i = next[0]++ & 1;
            if (null == pool[i])
            {
                pool[i] = new SnapshotImage(position, term, timestamp, sizeHint);
            }
            return pool[i].reset(position, term, timestamp);
        });
        applyAll(resumedContainer, log);
        log.close();

        final StringBuilder pauses = new StringBuilder();
        for (final long p : pausesNs)
        {
            pauses.append(pauses.length() == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.1f", p / 1e6));
        }
        final long[] sorted = pausesNs.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf(Locale.ROOT, "lockstep mode=snapshot orders=%d pause_ms=%s pause_median_ms=%.1f " +
            "pause_max_ms=%.1f image_bytes=%d file_bytes=%d background_write_ms=%d log_bytes=%d " +
            "restart_full_replay_ms=%d restart_from_snapshot_ms=%d tail_orders=%d churn=%d%n", orders, pauses,
            sorted[sorted.length / 2] / 1e6, sorted[sorted.length - 1] / 1e6, image[0].encodedLength(), fileBytes,
            TimeUnit.NANOSECONDS.toMillis(writeNs), logBytes, TimeUnit.NANOSECONDS.toMillis(fullReplayNs),
            TimeUnit.NANOSECONDS.toMillis(snapshotRestartNs), TAIL_ORDERS, churn);
    }

    /** Orders that never cross: bids below 1000, asks above, so every one rests. */
    private static final class OrderSource
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
        final MessageHeaderEncoder header = new MessageHeaderEncoder();
        final NewOrderEncoder order = new NewOrderEncoder();
        int length;

        final CancelOrderEncoder cancel = new CancelOrderEncoder();

        DirectBuffer restingOrder(final int i)
        {
            final boolean buy = (i & 1) == 0;
            return order(i, buy, buy ? 999 - (i % 500) : 1001 + (i % 500));
        }

        DirectBuffer order(final long clientOrderId, final boolean buy, final long price)
        {
            length = MessageHeaderEncoder.ENCODED_LENGTH + order.wrapAndApplyHeader(buffer, 0, header)
                .clientOrderId(clientOrderId).instrument(1).side(buy ? OrderSide.BUY : OrderSide.SELL)
                .price(buy ? Math.min(price, 999) : Math.max(price, 1001) + 200).quantity(10).encodedLength();
            return buffer;
        }

        DirectBuffer cancel(final long clientOrderId)
        {
            length = MessageHeaderEncoder.ENCODED_LENGTH + cancel.wrapAndApplyHeader(buffer, 0, header)
                .clientOrderId(clientOrderId).instrument(1).encodedLength();
            return buffer;
        }
    }

    private static ServiceContainer container(
        final MatchingEngineService service, final ArchiveRaftLog log, final long startPosition)
    {
        return new ServiceContainer(0, service, log, startPosition, new SessionTable(16, 256 * 1024),
            new TimerTable(1024), ServiceContainer.Outbox.DISCARD, new NoOpIdleStrategy());
    }

    private static void applyAll(final ServiceContainer container, final ArchiveRaftLog log)
    {
        while (container.apply(log.appendedPosition(), 1 << 20) > 0)
        {
        }
    }
}
