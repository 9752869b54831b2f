package io.lockstep.consensus.service;

import io.lockstep.consensus.RaftLog;
import io.lockstep.consensus.log.ClusterAction;
import io.lockstep.consensus.log.ClusterActionRequestEncoder;
import io.lockstep.consensus.log.MessageHeaderEncoder;
import io.lockstep.consensus.log.SessionMessageEncoder;
import io.lockstep.consensus.log.SessionOpenEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

/**
 * Writes service log entries straight into a log, as a leader would append them, with a log clock that advances a
 * microsecond per entry: for checks and benchmarks that replay a log through a container without a cluster.
 */
public final class EntryLogWriter
{
    private final RaftLog log;
    private final long term;
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 * 1024);
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private final SessionOpenEncoder sessionOpen = new SessionOpenEncoder();
    private final SessionMessageEncoder sessionMessage = new SessionMessageEncoder();
    private final ClusterActionRequestEncoder clusterAction = new ClusterActionRequestEncoder();
    private long timestamp = 1_000_000;

    /**
     * @param log  where entries go.
     * @param term term written on every frame.
     */
    public EntryLogWriter(final RaftLog log, final long term)
    {
        this.log = log;
        this.term = term;
    }

    /** A session opens (ids are given in order when applied: 1, 2, ...). */
    public void sessionOpen(final long correlationId)
    {
        final int length = sessionOpen.wrapAndApplyHeader(buffer, 0, header)
            .timestamp(timestamp += 1000).correlationId(correlationId).leaderEndpoint(-1).principal("")
            .encodedLength();
        append(SessionOpenEncoder.TEMPLATE_ID, length);
    }

    /** A client message. */
    public void sessionMessage(
        final long sessionId, final long sequence, final DirectBuffer payload, final int offset, final int length)
    {
        final int encoded = sessionMessage.wrapAndApplyHeader(buffer, 0, header).timestamp(timestamp += 1000)
            .sessionId(sessionId).sequence(sequence).putPayload(payload, offset, length).encodedLength();
        append(SessionMessageEncoder.TEMPLATE_ID, encoded);
    }

    /** A cluster action asking every member for a snapshot at the position after it. */
    public void snapshotAction()
    {
        final int length = clusterAction.wrapAndApplyHeader(buffer, 0, header)
            .timestamp(timestamp += 1000).action(ClusterAction.SNAPSHOT).encodedLength();
        append(ClusterActionRequestEncoder.TEMPLATE_ID, length);
    }

    /**
     * @return the log's durable position after writing what is pending.
     */
    public long flush()
    {
        return log.flush();
    }

    private void append(final int type, final int bodyLength)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + bodyLength;
        if (log.append(term, type, buffer, 0, length) < 0)
        {
            log.flush();
            if (log.append(term, type, buffer, 0, length) < 0)
            {
                throw new IllegalStateException("cannot append a " + length + "-byte entry");
            }
        }
    }
}
