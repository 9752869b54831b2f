package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.InstallSnapshotEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A snapshot chunk names its leader's cluster, as an append does: a member whose identity is sealed refuses a
 * chunk from another cluster's leader before it takes anything from it (its term, its leader, its configuration),
 * driven through the member's own decoders.
 */
class SnapshotChunkIdentityTest
{
    private static final long OWN_HIGH = 7;
    private static final long OWN_LOW = 9;
    private static final long ALL_THREE = 0b111;

    private final ScriptedTransport transport = new ScriptedTransport();
    private final MemoryElectionState electionState = new MemoryElectionState();
    private final long nowNs = 1_000_000_000L;
    private ConsensusAgent member;

    @BeforeEach
    void aMemberOfClusterSevenNine()
    {
        electionState.saveIdentity(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, true));
        electionState.save(3, ElectionStateStore.NO_VOTE);
        final List<Member> members = List.of(new Member(0, "h", 1, true), new Member(1, "h", 2, true),
            new Member(2, "h", 3, true));
        member = new ConsensusAgent(ConsensusConfig.of(2, members, TimeoutProfile.LAN), () -> nowNs, () -> nowNs,
            transport, new SimLog(64 * 1024), electionState, new Random(1));
        member.doWork();
    }

    @Test
    void aChunkFromAnotherClustersLeaderIsRefusedAndChangesNothing()
    {
        deliverChunk(8, OWN_LOW);

        assertEquals(3, member.term(), "the other cluster's term is not taken");
        assertEquals(-1, member.leaderId(), "nor its leader followed");
        assertEquals(ALL_THREE, member.membership().voters(), "nor its configuration adopted");
        assertEquals(0, member.membership().version());
        assertFalse(answered(), "nor answered");
        final List<MemberErrors.Entry> errors = member.errors().recent();
        assertEquals(1, errors.size(), errors.toString());
        assertEquals("cluster-identity", errors.get(0).kind());
    }

    @Test
    void aChunkFromItsOwnClustersLeaderIsFollowedAndAnswered()
    {
        deliverChunk(OWN_HIGH, OWN_LOW);

        assertEquals(5, member.term());
        assertEquals(1, member.leaderId());
        assertEquals(Role.FOLLOWER, member.role());
        assertEquals(0b011, member.membership().voters(), "the leader's committed configuration is taken");
        assertTrue(answered(), "the chunk is answered");
        assertEquals(0, member.errors().total());
    }

    /** The first chunk of a snapshot at 4,096 from member 1, leading term 5, under a configuration of version 1. */
    private void deliverChunk(final long clusterIdHigh, final long clusterIdLow)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final InstallSnapshotEncoder chunk = new InstallSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(5).leaderId(1).snapshotPosition(4096).snapshotTerm(4).chunkOffset(0).totalLength(1000)
            .configEpoch(0).configVersion(1).voters(0b011).learners(0)
            .clusterIdHigh(clusterIdHigh).clusterIdLow(clusterIdLow)
            .putChunk(new byte[100], 0, 100);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + chunk.encodedLength()];
        buffer.getBytes(0, bytes);
        transport.sent.clear();
        transport.deliver(1, bytes);
        member.doWork();
    }

    private boolean answered()
    {
        for (final ScriptedTransport.Sent message : transport.sent)
        {
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(new UnsafeBuffer(message.bytes()), 0);
            if (InstallSnapshotResponseDecoder.TEMPLATE_ID == header.templateId() && 1 == message.endpoint())
            {
                return true;
            }
        }
        return false;
    }
}
