package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendRequestEncoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.simulation.SimLog;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Random;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The relay standby passes on only what its own consensus took from the leader it follows: a stale leader's appends
 * stop at the relay instead of reaching every standby in its zone.
 */
class StandbyRelayTest
{
    private static final int RELAY = 3;
    private static final int OTHER_STANDBY = 4;

    private final ArrayDeque<byte[]> inbound = new ArrayDeque<>();
    private final ArrayDeque<Integer> inboundFrom = new ArrayDeque<>();
    private int sentToOtherStandby;
    private long nowNs = 1_000_000_000L;

    @Test
    void anAppendFromTheLeaderIsPassedOnAndOneFromAStaleLeaderIsNot()
    {
        final List<Member> members = List.of(new Member(0, "h", 1, true), new Member(1, "h", 2, true),
            new Member(2, "h", 3, true), new Member(RELAY, "h", 4, false), new Member(OTHER_STANDBY, "h", 5, false));
        final ConsensusAgent relay = new ConsensusAgent(
            new ConsensusConfig().memberId(RELAY).members(members).timeouts(TimeoutProfile.LAN).relay(RELAY),
            () -> nowNs, () -> nowNs, new ScriptedTransport(), new SimLog(64 * 1024), new MemoryElectionState(),
            new Random(1));

        deliver(1, append(5, 1));
        relay.doWork();
        assertEquals(1, relay.leaderId(), "the relay follows the leader of term 5");
        assertEquals(1, sentToOtherStandby, "and passes its append on");

        deliver(0, append(3, 0));
        relay.doWork();
        assertEquals(1, relay.leaderId(), "an append of term 3 deposes nobody");
        assertEquals(1, sentToOtherStandby, "and is not passed on");

        deliver(1, append(5, 1));
        relay.doWork();
        assertEquals(2, sentToOtherStandby, "the leader's next append is");
    }

    private void deliver(final int from, final byte[] message)
    {
        inboundFrom.add(from);
        inbound.add(message);
        nowNs += 1_000_000;
    }

    private static byte[] append(final long term, final int leaderId)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term).leaderId(leaderId).sequence(1).prevPosition(0).prevTerm(0).commitPosition(0).configEpoch(0)
            .putLogBytes(new byte[0], 0, 0);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private final class ScriptedTransport implements Transport
    {
        public int poll(final long nowNs, final MessageHandler handler)
        {
            int delivered = 0;
            while (!inbound.isEmpty())
            {
                final byte[] message = inbound.poll();
                handler.onMessage(inboundFrom.poll(), new UnsafeBuffer(message), 0, message.length);
                delivered++;
            }
            return delivered;
        }

        public boolean send(final int endpoint, final DirectBuffer buffer, final int offset, final int length)
        {
            // Appends only: the relay may also say other things to a standby (its configuration, for one).
            final boolean isAppend = AppendRequestEncoder.TEMPLATE_ID == buffer.getShort(offset + 2, LITTLE_ENDIAN) &&
                AppendRequestEncoder.SCHEMA_ID == buffer.getShort(offset + 4, LITTLE_ENDIAN);
            sentToOtherStandby += OTHER_STANDBY == endpoint && isAppend ? 1 : 0;
            return true;
        }

        public boolean isConnected(final int endpoint)
        {
            return true;
        }

        public int flush(final long nowNs)
        {
            return 0;
        }

        public void close()
        {
        }
    }
}
