package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import org.agrona.concurrent.NanoClock;

import java.util.List;
import java.util.Random;

/**
 * The member the rules tests drive by hand: member 2 of three voters, with `lan` timeouts and a fixed seed, its
 * wall clock the same as its clock.
 */
final class MemberOfThree
{
    static final List<Member> MEMBERS = List.of(new Member(0, "h", 1, true), new Member(1, "h", 2, true),
        new Member(2, "h", 3, true));

    private MemberOfThree()
    {
    }

    static ConsensusAgent memberTwo(
        final NanoClock clock, final ScriptedTransport transport, final RaftLog log, final ElectionStateStore state)
    {
        return new ConsensusAgent(ConsensusConfig.of(2, MEMBERS, TimeoutProfile.LAN), clock, clock::nanoTime,
            transport, log, state, new Random(1));
    }
}
