package io.lockstep.examples.kv;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.examples.kv.codecs.KvOp;
import io.lockstep.examples.kv.codecs.KvRequestEncoder;
import io.lockstep.examples.kv.codecs.KvResponseDecoder;
import io.lockstep.examples.kv.codecs.MessageHeaderDecoder;
import io.lockstep.examples.kv.codecs.MessageHeaderEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A key-value client that records each operation as a {@link HistoryOperation}: call and return times on this
 * machine's clock, and status ok (with output) or info (no answer before the deadline: outcome unknown). One
 * operation at a time; single-threaded.
 */
public final class KeyValueClient implements AutoCloseable
{
    private final int clientId;
    private final ClusterClient client;
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(2048);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final KvRequestEncoder request = new KvRequestEncoder();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final KvResponseDecoder response = new KvResponseDecoder();
    private long nextOpId;
    private long awaitedOpId = -1;
    private boolean answered;
    private boolean success;
    private String value;
    private long duplicatesSeen;

    /**
     * @param clientId id recorded in the history and in requests.
     * @param members  the cluster.
     */
    public KeyValueClient(final int clientId, final List<Member> members)
    {
        this.clientId = clientId;
        this.client = ClusterClient.connect(members, this::onEgress);
    }

    public boolean awaitConnected(final long timeoutMs)
    {
        return client.awaitConnected(timeoutMs);
    }

    public HistoryOperation get(final String key, final long timeoutMs)
    {
        return execute(KvOp.GET, key, "", "", timeoutMs);
    }

    public HistoryOperation put(final String key, final String newValue, final long timeoutMs)
    {
        return execute(KvOp.PUT, key, "", newValue, timeoutMs);
    }

    public HistoryOperation cas(final String key, final String expected, final String newValue, final long timeoutMs)
    {
        return execute(KvOp.CAS, key, expected, newValue, timeoutMs);
    }

    /**
     * @return the highest count of operations applied twice that the service has reported (0 is the claim).
     */
    public long duplicatesSeen()
    {
        return duplicatesSeen;
    }

    public void close()
    {
        client.close();
    }

    private HistoryOperation execute(
        final KvOp op, final String key, final String expected, final String newValue, final long timeoutMs)
    {
        final long opId = nextOpId++;
        request.wrapAndApplyHeader(out, 0, headerEncoder)
            .clientId(clientId).opId(opId).kind(op).key(key).expected(expected).value(newValue);
        awaitedOpId = opId;
        answered = false;
        final long call = System.nanoTime();
        final long deadline = call + timeoutMs * 1_000_000L;
        while (client.offer(out, 0, MessageHeaderEncoder.ENCODED_LENGTH + request.encodedLength()) < 0)
        {
            if (System.nanoTime() > deadline)
            {
                // Never queued: it cannot have been applied.
                return record(op, key, expected, newValue, call, System.nanoTime(), "fail", null);
            }
            idle();
        }
        while (!answered && System.nanoTime() < deadline)
        {
            idle();
        }
        final long ret = System.nanoTime();
        if (!answered)
        {
            return record(op, key, expected, newValue, call, ret, "info", null);
        }
        final String output = switch (op)
        {
            case GET -> value;
            case CAS -> Boolean.toString(success);
            default -> null;
        };
        return record(op, key, expected, newValue, call, ret, "ok", output);
    }

    private HistoryOperation record(
        final KvOp op, final String key, final String expected, final String newValue, final long call, final long ret,
        final String status, final String output)
    {
        return switch (op)
        {
            case GET -> new HistoryOperation(clientId, "get", key, null, null, call, ret, status, output);
            case PUT -> new HistoryOperation(clientId, "put", key, null, newValue, call, ret, status, output);
            default -> new HistoryOperation(clientId, "cas", key, expected, newValue, call, ret, status, output);
        };
    }

    private void idle()
    {
        if (0 == client.poll())
        {
            LockSupport.parkNanos(20_000);
        }
    }

    private void onEgress(final long sessionId, final long sequence, final DirectBuffer buffer, final int offset,
        final int length)
    {
        header.wrap(buffer, offset);
        if (header.templateId() != KvResponseDecoder.TEMPLATE_ID || header.schemaId() != KvResponseDecoder.SCHEMA_ID)
        {
            return;
        }
        response.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        duplicatesSeen = Math.max(duplicatesSeen, response.duplicatesSeen());
        if (response.clientId() == clientId && response.opId() == awaitedOpId)
        {
            success = response.success() == 1;
            value = response.value();
            answered = true;
        }
    }
}
