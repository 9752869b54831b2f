package io.lockstep.examples;

import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.service.SnapshotReplayCheck;
import io.lockstep.examples.kv.KeyValueService;
import io.lockstep.examples.kv.codecs.KvOp;
import io.lockstep.examples.kv.codecs.KvRequestEncoder;
import io.lockstep.examples.matching.MatchingEngineService;
import io.lockstep.examples.matching.codecs.CancelOrderEncoder;
import io.lockstep.examples.matching.codecs.NewOrderEncoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import io.lockstep.examples.matching.codecs.ReplaceOrderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * For every example service: a log replayed from its start reaches the same state (hash) as a snapshot taken part way,
 * loaded into a fresh service, and the rest of the log replayed. The snapshot goes through the file store, as on a
 * member. Snapshot points: early, middle and late in the log.
 */
class SnapshotReplayTest
{
    private static final int MESSAGES = 20_000;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(ints = { 1, MESSAGES / 2, MESSAGES - 1 })
    void matchingEngine(final int snapshotAfter)
    {
        check(MatchingEngineService::new, matchingOrders(new Random(snapshotAfter)), snapshotAfter);
    }

    @ParameterizedTest
    @ValueSource(ints = { 1, MESSAGES / 2, MESSAGES - 1 })
    void keyValueStore(final int snapshotAfter)
    {
        check(KeyValueService::new, keyValueRequests(new Random(snapshotAfter)), snapshotAfter);
    }

    @ParameterizedTest
    @ValueSource(ints = { 1, MESSAGES / 2 })
    void echo(final int snapshotAfter)
    {
        final Random random = new Random(snapshotAfter);
        final List<byte[]> messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++)
        {
            final byte[] payload = new byte[1 + random.nextInt(300)];
            random.nextBytes(payload);
            messages.add(payload);
        }
        check(EchoService::new, messages, snapshotAfter);
    }

    private void check(final Supplier<ClusteredService> factory, final List<byte[]> messages, final int snapshotAfter)
    {
        final SnapshotReplayCheck.Result result = SnapshotReplayCheck.check(dir, factory, messages, 3, snapshotAfter);
        assertEquals(result.hashAtSnapshot(), result.hashAfterLoad(), "state right after loading the snapshot");
        assertEquals(result.fullReplayHash(), result.snapshotReplayHash(), "state after replaying the rest");
        // The hash must see the service's state at all, or the check proves nothing.
        assertNotEquals(result.hashAtSnapshot(), result.fullReplayHash(), "state changed after the snapshot");
    }

    private static List<byte[]> matchingOrders(final Random random)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final io.lockstep.examples.matching.codecs.MessageHeaderEncoder header =
            new io.lockstep.examples.matching.codecs.MessageHeaderEncoder();
        final List<byte[]> messages = new ArrayList<>();
        final long[] nextOrderId = new long[3];
        for (int i = 0; i < MESSAGES; i++)
        {
            final int session = i % 3;
            final int instrument = random.nextInt(3);
            final int roll = random.nextInt(10);
            final int length;
            if (roll < 7 || nextOrderId[session] == 0)
            {
                length = new NewOrderEncoder().wrapAndApplyHeader(buffer, 0, header)
                    .clientOrderId(nextOrderId[session]++).instrument(instrument)
                    .side(random.nextBoolean() ? OrderSide.BUY : OrderSide.SELL)
                    .price(990 + random.nextInt(21)).quantity(1 + random.nextInt(100)).encodedLength();
            }
            else if (roll < 9)
            {
                length = new CancelOrderEncoder().wrapAndApplyHeader(buffer, 0, header)
                    .clientOrderId(random.nextInt((int)nextOrderId[session])).instrument(instrument).encodedLength();
            }
            else
            {
                length = new ReplaceOrderEncoder().wrapAndApplyHeader(buffer, 0, header)
                    .clientOrderId(random.nextInt((int)nextOrderId[session])).instrument(instrument)
                    .price(990 + random.nextInt(21)).quantity(1 + random.nextInt(100)).encodedLength();
            }
            final byte[] bytes = new byte[8 + length];
            buffer.getBytes(0, bytes);
            messages.add(bytes);
        }
        return messages;
    }

    private static List<byte[]> keyValueRequests(final Random random)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final io.lockstep.examples.kv.codecs.MessageHeaderEncoder header =
            new io.lockstep.examples.kv.codecs.MessageHeaderEncoder();
        final List<byte[]> messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++)
        {
            final KvOp op = KvOp.values()[random.nextInt(3)];
            // Now and then an operation id repeats: the service counts those, and the count must survive snapshots.
            final long opId = random.nextInt(50) == 0 ? Math.max(0, i - 3) : i;
            final int length = new KvRequestEncoder().wrapAndApplyHeader(buffer, 0, header)
                .clientId(i % 3).opId(opId).kind(op).key("k" + random.nextInt(200))
                .expected("v" + random.nextInt(5)).value("v" + random.nextInt(5)).encodedLength();
            final byte[] bytes = new byte[8 + length];
            buffer.getBytes(0, bytes);
            messages.add(bytes);
        }
        return messages;
    }
}
