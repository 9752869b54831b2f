package io.lockstep.examples.kv;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.examples.kv.codecs.KvOp;
import io.lockstep.examples.kv.codecs.KvRequestDecoder;
import io.lockstep.examples.kv.codecs.KvResponseEncoder;
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
 * claim, checked from outside. Snapshots arrive with the snapshot work.
 */
public final class KeyValueService implements ClusteredService
{
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
    }

    public void onSessionOpen(final ClientSession session, final long timestamp)
    {
    }

    public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
    {
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
        if (null == session || length < MessageHeaderDecoder.ENCODED_LENGTH)
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

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
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
