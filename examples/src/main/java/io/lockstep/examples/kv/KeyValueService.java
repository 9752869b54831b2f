package io.lockstep.examples.kv;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.examples.kv.codecs.KvOp;
import io.lockstep.examples.kv.codecs.KvRequestDecoder;
import io.lockstep.examples.kv.codecs.KvResponseEncoder;
import io.lockstep.examples.kv.codecs.KvSnapshotEntryDecoder;
import io.lockstep.examples.kv.codecs.KvSnapshotEntryEncoder;
import io.lockstep.examples.kv.codecs.KvSnapshotHeaderDecoder;
import io.lockstep.examples.kv.codecs.KvSnapshotHeaderEncoder;
import io.lockstep.examples.kv.codecs.KvSnapshotOpsDecoder;
import io.lockstep.examples.kv.codecs.KvSnapshotOpsEncoder;
import io.lockstep.examples.kv.codecs.MessageHeaderDecoder;
import io.lockstep.examples.kv.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * A replicated key-value store: get, put and compare-and-set, answered to the asking session. It also counts any
 * operation (client id, op id) applied more than once and reports the count in every response: the exactly-once
 * claim, checked from outside. Its snapshot holds the store, the duplicate count and the ids of applied operations
 * (SBE fragments: a header, one fragment per entry, then the ids in groups).
 */
public final class KeyValueService implements ClusteredService
{
    /** Applied-operation ids per snapshot fragment (32 KiB of them). */
    private static final int OPS_PER_FRAGMENT = 4096;

    private final TreeMap<String, String> store = new TreeMap<>();
    private final Set<Long> appliedOps = new HashSet<>();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final KvRequestDecoder request = new KvRequestDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final KvResponseEncoder response = new KvResponseEncoder();
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(2048);
    private long duplicatesSeen;

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
        if (null == snapshot)
        {
            return;
        }
        final long[] counts = new long[2];
        snapshot.readOne((buffer, offset, length) ->
        {
            wrapSnapshotHeader(buffer, offset, KvSnapshotHeaderDecoder.TEMPLATE_ID);
            final KvSnapshotHeaderDecoder h = new KvSnapshotHeaderDecoder()
                .wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            duplicatesSeen = h.duplicatesSeen();
            counts[0] = h.entryCount();
            counts[1] = h.opCount();
        });
        final KvSnapshotEntryDecoder entry = new KvSnapshotEntryDecoder();
        for (long i = 0; i < counts[0]; i++)
        {
            snapshot.readOne((buffer, offset, length) ->
            {
                wrapSnapshotHeader(buffer, offset, KvSnapshotEntryDecoder.TEMPLATE_ID);
                entry.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
                    header.version());
                final String key = entry.key();
                store.put(key, entry.value());
            });
        }
        final KvSnapshotOpsDecoder ops = new KvSnapshotOpsDecoder();
        while (appliedOps.size() < counts[1])
        {
            snapshot.readOne((buffer, offset, length) ->
            {
                wrapSnapshotHeader(buffer, offset, KvSnapshotOpsDecoder.TEMPLATE_ID);
                ops.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                for (final KvSnapshotOpsDecoder.OpsDecoder op : ops.ops())
                {
                    appliedOps.add(op.op());
                }
            });
        }
    }

    public void onSessionOpen(final ClientSession session, final long timestamp)
    {
    }

    public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
    {
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return;
        }
        header.wrap(buffer, offset);
        if (header.schemaId() != KvRequestDecoder.SCHEMA_ID || header.templateId() != KvRequestDecoder.TEMPLATE_ID)
        {
            return;
        }
        request.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final int clientId = request.clientId();
        final long opId = request.opId();
        final KvOp op = request.kind();
        final String key = request.key();
        final String expected = request.expected();
        final String value = request.value();
        if (!appliedOps.add(((long)clientId << 40) ^ opId))
        {
            duplicatesSeen++;
        }
        boolean success = true;
        String result = "";
        switch (op)
        {
            case GET -> result = store.getOrDefault(key, "");
            case PUT -> store.put(key, value);
            case CAS ->
            {
                success = Objects.equals(store.getOrDefault(key, ""), expected);
                if (success)
                {
                    store.put(key, value);
                }
            }
            default -> success = false;
        }
        response.wrapAndApplyHeader(out, 0, headerEncoder)
            .clientId(clientId).opId(opId).kind(op).success((short)(success ? 1 : 0)).duplicatesSeen(duplicatesSeen)
            .value(result);
        session.offer(out, 0, MessageHeaderEncoder.ENCODED_LENGTH + response.encodedLength());
    }

    public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
        // The store offers none.
    }

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 * 1024);
        final int headerLength = new KvSnapshotHeaderEncoder().wrapAndApplyHeader(buffer, 0, headerEncoder)
            .duplicatesSeen(duplicatesSeen).entryCount(store.size()).opCount(appliedOps.size()).encodedLength();
        writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + headerLength);
        final KvSnapshotEntryEncoder entry = new KvSnapshotEntryEncoder();
        for (final Map.Entry<String, String> e : store.entrySet())
        {
            final int length = entry.wrapAndApplyHeader(buffer, 0, headerEncoder).key(e.getKey()).value(e.getValue())
                .encodedLength();
            writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
        }
        // Sorted: equal state gives equal snapshot bytes on every member.
        final long[] ids = appliedOps.stream().mapToLong(Long::longValue).sorted().toArray();
        final KvSnapshotOpsEncoder ops = new KvSnapshotOpsEncoder();
        for (int i = 0; i < ids.length; i += OPS_PER_FRAGMENT)
        {
            final int count = Math.min(OPS_PER_FRAGMENT, ids.length - i);
            final KvSnapshotOpsEncoder.OpsEncoder group = ops.wrapAndApplyHeader(buffer, 0, headerEncoder)
                .opsCount(count);
            for (int k = 0; k < count; k++)
            {
                group.next().op(ids[i + k]);
            }
            writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + ops.encodedLength());
        }
    }

    private void wrapSnapshotHeader(final DirectBuffer buffer, final int offset, final int templateId)
    {
        header.wrap(buffer, offset);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID || header.templateId() != templateId)
        {
            throw new IllegalStateException("key-value snapshot: expected template " + templateId + ", found schema " +
                header.schemaId() + " template " + header.templateId());
        }
    }

    public void onRoleChange(final ClusterRole newRole)
    {
    }

    public void onTerminate(final Cluster cluster)
    {
    }

    /**
     * @return a hash of the store, equal on replicas at the same position.
     */
    public long stateHash()
    {
        long h = 17;
        for (final Map.Entry<String, String> e : store.entrySet())
        {
            h = h * 31 + e.getKey().hashCode();
            h = h * 31 + e.getValue().hashCode();
        }
        return h * 31 + duplicatesSeen;
    }
}
