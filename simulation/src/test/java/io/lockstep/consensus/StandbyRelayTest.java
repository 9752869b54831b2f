package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.AppendRequestEncoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

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

    private final ScriptedTransport transport = new ScriptedTransport();
    private long nowNs = 1_000_000_000L;

    @Test
    void anAppendFromTheLeaderIsPassedOnAndOneFromAStaleLeaderIsNot()
    {
        final List<Member> members = List.of(new Member(0, "h", 1, true), new Member(1, "h", 2, true),
            new Member(2, "h", 3, true), new Member(RELAY, "h", 4, false), new Member(OTHER_STANDBY, "h", 5, false));
        final ConsensusAgent relay = new ConsensusAgent(
            new ConsensusConfig().memberId(RELAY).members(members).timeouts(TimeoutProfile.LAN).relay(RELAY),
            () -> nowNs, () -> nowNs, transport, new SimLog(64 * 1024), new MemoryElectionState(),
            new Random(1));

        deliver(1, append(5, 1));
        relay.doWork();
        assertEquals(1, relay.leaderId(), "the relay follows the leader of term 5");
        assertEquals(1, appendsToOtherStandby(), "and passes its append on");

        deliver(0, append(3, 0));
        relay.doWork();
        assertEquals(1, relay.leaderId(), "an append of term 3 deposes nobody");
        assertEquals(1, appendsToOtherStandby(), "and is not passed on");

        deliver(1, append(5, 1));
        relay.doWork();
        assertEquals(2, appendsToOtherStandby(), "the leader's next append is");
    }

    private void deliver(final int from, final byte[] message)
    {
        transport.deliver(from, message);
        nowNs += 1_000_000;
    }

    /** Appends only: the relay may also say other things to a standby (its configuration, for one). */
    private long appendsToOtherStandby()
    {
        return transport.sent.stream().filter(m -> OTHER_STANDBY == m.endpoint() &&
            AppendRequestEncoder.TEMPLATE_ID == new UnsafeBuffer(m.bytes()).getShort(2, LITTLE_ENDIAN) &&
            AppendRequestEncoder.SCHEMA_ID == new UnsafeBuffer(m.bytes()).getShort(4, LITTLE_ENDIAN)).count();
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
}
