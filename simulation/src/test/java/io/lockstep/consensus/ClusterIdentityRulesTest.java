package io.lockstep.consensus;

import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.AppendResponseEncoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ConfigurationNoticeEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.RequestVoteEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.VoteDecoder;
import io.lockstep.consensus.codecs.VoteEncoder;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member whose cluster identity is sealed takes nothing from a member of another cluster: no snapshot chunk (its
 * term, its leader, its configuration), no vote toward its own election, no vote request, no configuration notice,
 * no acknowledgement toward its commit; and, once sealed, no leader that names no cluster. Nor does any member take
 * a term beyond the range of the membership epoch after its own. Driven message by message through the member's
 * own decoders.
 */
class ClusterIdentityRulesTest
{
    private static final long OWN_HIGH = 7;
    private static final long OWN_LOW = 9;
    private static final long OTHER_HIGH = 8;
    private static final long ALL_THREE = 0b111;

    private final ScriptedTransport transport = new ScriptedTransport();
    private final MemoryElectionState electionState = new MemoryElectionState();
    private long nowNs = 1_000_000_000L;
    private ConsensusAgent member;

    @BeforeEach
    void aMemberOfClusterSevenNine()
    {
        electionState.saveIdentity(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, true));
        electionState.save(3, ElectionStateStore.NO_VOTE);
        member = MemberOfThree.memberTwo(() -> nowNs, transport, new SimLog(64 * 1024), electionState);
        member.doWork();
    }

    @Test
    void aChunkFromAnotherClustersLeaderIsRefusedAndChangesNothing()
    {
        deliverChunk(OTHER_HIGH, OWN_LOW);
        assertNothingTaken();
        assertOneIdentityError();

        deliverChunk(0, 0);
        assertNothingTaken();
        assertEquals(2, member.errors().total(), "a leader that names no cluster is refused too, once sealed");
    }

    @Test
    void aChunkFromItsOwnClustersLeaderIsFollowedAndAnswered()
    {
        deliverChunk(OWN_HIGH, OWN_LOW);

        assertEquals(5, member.term());
        assertEquals(1, member.leaderId());
        assertEquals(Role.FOLLOWER, member.role());
        assertEquals(1, member.membership().version(), "the leader's committed configuration is taken");
        assertTrue(sentTo(1, InstallSnapshotResponseDecoder.TEMPLATE_ID), "the chunk is answered");
        assertEquals(0, member.errors().total());
    }

    @Test
    void aLeaderPutsItsIdentityInEveryChunk()
    {
        final ClusterFormation formation = new ClusterFormation(2, electionState, new SimLog(4096),
            member.membership(), member.errors());
        final MemberProtocolPublisher publisher = new MemberProtocolPublisher(transport, 64 * 1024,
            member.membership(), formation);
        transport.sent.clear();
        publisher.installSnapshot(1, 5, 2, 4096, 4, 0, 100, new UnsafeBuffer(new byte[100]), 0, 100);

        final UnsafeBuffer sent = new UnsafeBuffer(transport.sent.get(0).bytes());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(sent, 0);
        final InstallSnapshotDecoder chunk = new InstallSnapshotDecoder().wrap(sent,
            MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        assertEquals(OWN_HIGH, chunk.clusterIdHigh());
        assertEquals(OWN_LOW, chunk.clusterIdLow());
    }

    @Test
    void aCandidateCountsOnlyVotesFromItsOwnCluster()
    {
        nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
        member.doWork();
        assertEquals(Role.CANDIDATE, member.role(), "its pre-vote is under way");

        deliverVote(0, OTHER_HIGH);
        assertEquals(3, member.term(), "another cluster's grant does not make a quorum");
        assertOneIdentityError();

        deliverVote(0, OWN_HIGH);
        assertEquals(4, member.term(), "its own cluster's grant does: the election starts");
    }

    @Test
    void aVoteNamingNoClusterCountsForAMemberThatDoesNotKnowTheIdentityYetMayBeNeeded()
    {
        nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
        member.doWork();
        assertEquals(Role.CANDIDATE, member.role(), "its pre-vote is under way");

        deliverVote(0, 0);
        assertEquals(4, member.term(), "a grant naming no cluster counts: the election starts");
        assertEquals(0, member.errors().total(), "and nothing is reported");
    }

    @Test
    void aLeaderCountsNoAcknowledgementFromAnotherClusterTowardsItsCommit()
    {
        leadTermFour();
        assertEquals(Role.LEADER, member.role(), "elected with member 0's vote");
        final long end = member.logPosition();
        assertTrue(end > 0, "the leader appended its term's first entry");
        final long commitBefore = member.commitPosition();

        deliverAcknowledgement(0, end, OTHER_HIGH);
        assertEquals(commitBefore, member.commitPosition(), "another cluster's member 0 does not make a quorum");
        assertOneIdentityError();

        deliverAcknowledgement(0, end, OWN_HIGH);
        assertEquals(end, member.commitPosition(), "its own member 0 does");
    }

    @Test
    void anotherClustersAcknowledgementsAreRecordedOnceNotForEveryMessage()
    {
        leadTermFour();
        final long end = member.logPosition();

        for (int i = 0; i < 100; i++)
        {
            deliverAcknowledgement(0, end, OTHER_HIGH);
        }
        assertOneIdentityError();
        assertEquals(1, member.errors().total(), "recorded once, not a hundred times");
        assertEquals(0, member.commitPosition(), "and none counted");
    }

    @Test
    void aSealedMemberNamesItsIdentityInItsAcknowledgementsAndAnUnsealedOneNone()
    {
        assertEquals(OWN_HIGH, acknowledgementFrom(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, true)).clusterIdHigh());
        assertEquals(OWN_LOW, acknowledgementFrom(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, true)).clusterIdLow());

        // An unsealed identity may be one its cluster has replaced: a sealed leader would ignore it for good.
        final AppendResponseDecoder unsealed = acknowledgementFrom(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, false));
        assertEquals(0, unsealed.clusterIdHigh());
        assertEquals(0, unsealed.clusterIdLow());
    }

    @Test
    void aVoteRequestFromAnotherClustersCandidateIsIgnored()
    {
        deliverVoteRequest(10, OTHER_HIGH);
        assertEquals(3, member.term(), "its term is not taken");
        assertEquals(ElectionStateStore.NO_VOTE, electionState.votedFor());
        assertFalse(sentTo(0, VoteDecoder.TEMPLATE_ID), "nor answered");
        assertOneIdentityError();

        deliverVoteRequest(10, OWN_HIGH);
        assertEquals(10, member.term());
        assertEquals(0, electionState.votedFor(), "its own cluster's candidate gets the vote");
    }

    @Test
    void aTermFarAboveItsOwnIsNeverTaken()
    {
        deliverVoteRequest(Long.MAX_VALUE, OWN_HIGH);
        assertEquals(3, member.term(), "a term this high would leave no term to stand in, durably");
        assertFalse(sentTo(0, VoteDecoder.TEMPLATE_ID), "nor is it answered");
        assertEquals("term-out-of-range", member.errors().recent().get(0).kind());
        deliverVoteRequest(Membership.firstTermOf(2), OWN_HIGH);
        assertEquals(3, member.term(), "two epochs' ranges above");

        deliverVoteRequest(Membership.firstTermOf(1) + 5, OWN_HIGH);
        assertEquals(Membership.firstTermOf(1) + 5, member.term(),
            "the next range is taken: a member whose term reached the top of its own stands in it");
    }

    @Test
    void aConfigurationNoticeFromAnotherClusterIsIgnored()
    {
        deliverNotice(OTHER_HIGH);
        assertEquals(0, member.membership().epoch(), "another cluster's newer epoch is not adopted");
        assertOneIdentityError();

        deliverNotice(OWN_HIGH);
        assertEquals(1, member.membership().epoch(), "its own cluster's is");
    }

    /** The member stands after an election timeout and is elected for term 4 with member 0's vote. */
    private void leadTermFour()
    {
        nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
        member.doWork();
        deliverVote(0, OWN_HIGH, 3, true);
        deliverVote(0, OWN_HIGH, 4, false);
    }

    /** What a member of the given identity sends when it acknowledges an append. */
    private AppendResponseDecoder acknowledgementFrom(final ClusterIdentity identity)
    {
        final MemoryElectionState state = new MemoryElectionState();
        state.saveIdentity(identity);
        final ClusterFormation formation = new ClusterFormation(2, state, new SimLog(4096), member.membership(),
            member.errors());
        final MemberProtocolPublisher publisher = new MemberProtocolPublisher(transport, 64 * 1024,
            member.membership(), formation);
        transport.sent.clear();
        publisher.appendResponse(1, 5, 2, 1, true, 4096, 4096, 0, null);

        final UnsafeBuffer sent = new UnsafeBuffer(transport.sent.get(0).bytes());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(sent, 0);
        return new AppendResponseDecoder().wrap(sent, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
            header.version());
    }

    private void assertNothingTaken()
    {
        assertEquals(3, member.term(), "the other cluster's term is not taken");
        assertEquals(-1, member.leaderId(), "nor its leader followed");
        assertEquals(ALL_THREE, member.membership().voters(), "nor its configuration adopted");
        assertEquals(0, member.membership().version());
        assertFalse(sentTo(1, InstallSnapshotResponseDecoder.TEMPLATE_ID), "nor answered");
        assertEquals(OWN_HIGH, member.clusterIdentity().high(), "its own identity is kept");
        assertEquals(OWN_LOW, member.clusterIdentity().low());
    }

    private void assertOneIdentityError()
    {
        final List<MemberErrors.Entry> errors = member.errors().recent();
        assertEquals(1, errors.size(), errors.toString());
        assertEquals("cluster-identity", errors.get(0).kind());
    }

    /** The first chunk of a snapshot at 4,096 from member 1, leading term 5, under configuration version 1. */
    private void deliverChunk(final long clusterIdHigh, final long clusterIdLow)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final InstallSnapshotEncoder chunk = new InstallSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(5).leaderId(1).snapshotPosition(4096).snapshotTerm(4).chunkOffset(0).totalLength(1000)
            .configEpoch(0).configVersion(1).voters(ALL_THREE).learners(0)
            .clusterIdHigh(clusterIdHigh).clusterIdLow(clusterIdLow)
            .putChunk(new byte[100], 0, 100);
        deliver(1, buffer, chunk.encodedLength());
    }

    /** Member 0 grants this member's pre-vote for term 4. */
    private void deliverVote(final int voter, final long clusterIdHigh)
    {
        deliverVote(voter, clusterIdHigh, 3, true);
    }

    /** A voter grants this member's pre-vote or vote for term 4, the voter being at {@code term}. */
    private void deliverVote(final int voter, final long clusterIdHigh, final long term, final boolean preVote)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final VoteEncoder vote = new VoteEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term).voterId(voter).candidateTerm(4).granted(BooleanType.TRUE)
            .preVote(preVote ? BooleanType.TRUE : BooleanType.FALSE)
            .configEpoch(0).mayElect(BooleanType.TRUE).holdingsRound(0).holdingsKnown(BooleanType.FALSE)
            .configVersion(0).logPosition(0).promisedPosition(0).clusterIdHigh(clusterIdHigh).clusterIdLow(
                0 == clusterIdHigh ? 0 : OWN_LOW).lastLogTerm(0);
        deliver(voter, buffer, vote.encodedLength());
    }

    /** A follower at term 4 says it holds and has made durable the leader's log up to {@code position}. */
    private void deliverAcknowledgement(final int follower, final long position, final long clusterIdHigh)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final AppendResponseEncoder ack = new AppendResponseEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(4).followerId(follower).sequence(1).success(BooleanType.TRUE).appendedPosition(position)
            .durablePosition(position).commitPosition(0).configEpoch(0).clusterIdHigh(clusterIdHigh)
            .clusterIdLow(OWN_LOW);
        ack.termStartsCount(0);
        deliver(follower, buffer, ack.encodedLength());
    }

    /** Member 0 stands in a term. */
    private void deliverVoteRequest(final long term, final long clusterIdHigh)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final RequestVoteEncoder request = new RequestVoteEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term).candidateId(0).lastLogTerm(0).lastLogPosition(0).preVote(BooleanType.FALSE)
            .transfer(BooleanType.FALSE).configEpoch(0).holdingsRound(0).clusterIdHigh(clusterIdHigh)
            .clusterIdLow(OWN_LOW);
        deliver(0, buffer, request.encodedLength());
    }

    /** Member 1 says it is on membership epoch 1, all three voting. */
    private void deliverNotice(final long clusterIdHigh)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final ConfigurationNoticeEncoder notice = new ConfigurationNoticeEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .memberId(1).configEpoch(1).voters(ALL_THREE).learners(0).configVersion(0)
            .clusterIdHigh(clusterIdHigh).clusterIdLow(OWN_LOW);
        deliver(1, buffer, notice.encodedLength());
    }

    private void deliver(final int from, final UnsafeBuffer buffer, final int bodyLength)
    {
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + bodyLength];
        buffer.getBytes(0, bytes);
        transport.sent.clear();
        transport.deliver(from, bytes);
        member.doWork();
    }

    private boolean sentTo(final int endpoint, final int templateId)
    {
        for (final ScriptedTransport.Sent message : transport.sent)
        {
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(new UnsafeBuffer(message.bytes()), 0);
            if (templateId == header.templateId() && endpoint == message.endpoint())
            {
                return true;
            }
        }
        return false;
    }
}
