package io.lockstep.consensus;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.RequestVoteDecoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.VoteDecoder;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The voting rules of one member, driven message by message.
 */
class VoteRulesTest
{
    private final ScriptedTransport transport = new ScriptedTransport();
    private final MemoryElectionState electionState = new MemoryElectionState();
    private final SimLog log = new SimLog(64 * 1024);
    private long nowNs = 1_000_000_000L;
    private ConsensusAgent voter;

    @BeforeEach
    void startVoter()
    {
        // A member of a cluster that has formed: a new one neither votes nor stands (ClusterFormationTest).
        electionState.saveIdentity(ClusterIdentity.FORMED_BEFORE_IDENTITIES);
        voter = newVoter();
    }

    @Test
    void aVoteIsDurableAndARestartedVoterDoesNotVoteTwiceInATerm()
    {
        voter.onRequestVote(5, 0, 0, 0, false, false);
        assertTrue(granted());
        assertEquals(5, electionState.term());
        assertEquals(0, electionState.votedFor());

        voter = newVoter();
        voter.onRequestVote(5, 1, 0, 0, false, false);
        assertFalse(granted(), "second candidate of the same term");
        voter.onRequestVote(5, 0, 0, 0, false, false);
        assertTrue(granted(), "the same candidate again is fine");
    }

    @Test
    void aRestoredMemberWhoseVoteIsUnknownVotesForNoOneInThatTermAndAsUsualAfter()
    {
        electionState.save(5, ElectionStateStore.VOTE_UNKNOWN);
        voter = newVoter();
        voter.onRequestVote(5, 0, 0, 0, false, false);
        assertFalse(granted(), "it may have voted in term 5 before its data was replaced");
        voter.onRequestVote(5, 1, 0, 0, false, false);
        assertFalse(granted(), "for anyone");
        voter.onRequestVote(6, 1, 0, 0, false, false);
        assertTrue(granted(), "a later term is a new vote");
    }

    @Test
    void aCandidateWithALessCompleteLogIsRefused()
    {
        electionState.save(3, ElectionStateStore.NO_VOTE);
        log.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[100]), 0, 100);
        log.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[100]), 0, 100);
        log.flush();
        voter = newVoter();
        final long end = log.pendingPosition();

        voter.onRequestVote(4, 0, 2, end + 1000, false, false);
        assertFalse(granted(), "older last term, longer log");
        voter.onRequestVote(5, 0, 3, end - 32, false, false);
        assertFalse(granted(), "same last term, shorter log");
        voter.onRequestVote(6, 0, 3, end, false, false);
        assertTrue(granted(), "same last term, same length");
    }

    @Test
    void aMemberThatHearsALiveLeaderIgnoresCandidatesUnlessItIsATransfer()
    {
        voter.onAppendRequest(2, 1, 0, 0, 0, 0, 0, 0, new UnsafeBuffer(new byte[0]), 0, 0);
        assertEquals(1, voter.leaderId());

        voter.onRequestVote(3, 0, 0, 0, true, false);
        assertFalse(granted(), "pre-vote while the leader is alive");
        voter.onRequestVote(3, 0, 0, 0, false, false);
        assertFalse(granted(), "vote while the leader is alive");
        assertEquals(2, voter.term(), "a refused candidate does not raise the term");

        voter.onRequestVote(3, 0, 0, 0, false, true);
        assertTrue(granted(), "leadership transfer overrides stickiness");
        assertEquals(3, voter.term());
    }

    @Test
    void aPreVoteChangesNothing()
    {
        voter.onRequestVote(7, 0, 0, 0, true, false);
        assertTrue(granted());
        assertEquals(0, voter.term());
        assertEquals(ElectionStateStore.NO_VOTE, electionState.votedFor());
    }

    @Test
    void aCandidateWhoseVoteSplitTriesAgainWithinTwoHeartbeatsNotAnElectionTimeout()
    {
        transport.down.add(0); // the leader died: its connection dropped
        standInTermOne();
        voter.onVote(1, 1, 1, false, false); // member 1 stood too, and voted for itself: the vote split

        transport.sent.clear();
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
        final RequestVoteDecoder retry = lastRequestVote();
        assertEquals(BooleanType.TRUE, retry.preVote(), "tried again two heartbeats on, starting with a pre-vote");
        assertEquals(2, retry.term());
        assertEquals(1, voter.term(), "which raises no term");
    }

    @Test
    void aCandidateWaitsOutItsTimeoutForAVoterThatHasNotAnswered()
    {
        transport.down.add(0);
        standInTermOne(); // member 1, connected, has not answered: its disk or link may be slow

        transport.sent.clear();
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
        assertTrue(transport.sent.isEmpty(), "no retry while a connected voter may still grant its vote");
        voter.onVote(1, 1, 1, true, false);
        assertEquals(Role.LEADER, voter.role(), "and its late vote wins the election");
    }

    @Test
    void aRefusalWithTheOtherVoterConnectedLeavesTheElectionOpen()
    {
        standInTermOne();
        voter.onVote(1, 1, 1, false, false);
        transport.sent.clear();
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
        assertTrue(transport.sent.isEmpty(), "member 0 is connected and may still grant it");
        nowNs += TimeoutProfile.LAN.electionTimeoutNs();
        voter.doWork();
        assertEquals(2, lastRequestVote().term(), "after the election timeout it tries again");
    }

    @Test
    void onlyTheFirstSplitVoteSinceALeaderWasHeardIsRetriedEarly()
    {
        transport.down.add(0);
        standInTermOne();
        voter.onVote(1, 1, 1, false, false); // split
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
        voter.onVote(1, 1, 2, true, true); // the retry's pre-vote granted: an election in term 2
        assertEquals(2, voter.term());
        voter.onVote(2, 1, 2, false, false); // split again: the two candidates retried in step

        transport.sent.clear();
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
        assertTrue(transport.sent.isEmpty(), "the second split vote waits out the randomised timeout, which parts " +
            "candidates that retry in step");
        nowNs += TimeoutProfile.LAN.electionTimeoutNs() * 3 / 2;
        voter.doWork();
        assertEquals(3, lastRequestVote().term(), "then it tries again");
    }

    @Test
    void aVoterThatJustVotedRefusesPreVotesUntilItsChoiceHadATimeoutToBeHeard()
    {
        voteForMemberOneTwoHeartbeatsAgo();
        voter.onRequestVote(2, 0, 0, 0, true, false);
        assertFalse(granted(), "member 0, retrying after it lost term 1, is refused: member 1 may lead, unheard yet");
        nowNs += TimeoutProfile.LAN.electionTimeoutNs();
        voter.doWork();
        voter.onRequestVote(2, 0, 0, 0, true, false);
        assertTrue(granted(), "member 1 was not heard from for a whole timeout");
    }

    @Test
    void aVoteShieldsItsWinnerOnlyUntilTheWinnerIsHeardAndNeverFromItsOwnRetry()
    {
        voteForMemberOneTwoHeartbeatsAgo();
        voter.onRequestVote(2, 1, 0, 0, true, false);
        assertTrue(granted(), "member 1 itself, retrying: the shield is for it");

        voter.onAppendRequest(1, 1, 0, 0, 0, 0, 0, 0, new UnsafeBuffer(new byte[0]), 0, 0);
        assertEquals(1, voter.leaderId(), "member 1 won and was heard");
        transport.down.add(1);
        voter.doWork(); // and its connection dropped: it died
        voter.onRequestVote(2, 0, 0, 0, true, false);
        assertTrue(granted(), "member 0 stands at once after the winner it heard died");
    }

    /** Member 1 asked for and got this member's vote in term 1, and has not been heard from since. */
    private void voteForMemberOneTwoHeartbeatsAgo()
    {
        voter.doWork();
        voter.onRequestVote(1, 1, 0, 0, false, false);
        assertTrue(granted(), "member 1 gets the vote in term 1");
        nowNs += 2 * TimeoutProfile.LAN.heartbeatIntervalNs();
        voter.doWork();
    }

    /** No leader heard for a timeout; member 1 grants the pre-vote: an election in term 1. */
    private void standInTermOne()
    {
        nowNs += 2 * TimeoutProfile.LAN.electionTimeoutNs();
        voter.doWork();
        assertEquals(Role.CANDIDATE, voter.role(), "no leader heard for a timeout: a pre-vote");
        voter.onVote(0, 1, 1, true, true);
        assertEquals(1, voter.term(), "a pre-vote granted: an election in term 1");
    }

    private RequestVoteDecoder lastRequestVote()
    {
        final UnsafeBuffer request = lastOf(RequestVoteDecoder.TEMPLATE_ID);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(request, 0);
        return new RequestVoteDecoder().wrap(request, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
            header.version());
    }

    @Test
    void anAppendFromAStaleLeaderIsRefusedWithTheCurrentTerm()
    {
        electionState.save(4, ElectionStateStore.NO_VOTE);
        voter = newVoter();
        voter.onAppendRequest(3, 1, 0, 0, 0, 0, 0, 0, new UnsafeBuffer(new byte[0]), 0, 0);
        final AppendResponseDecoder response = lastAppendResponse();
        assertEquals(BooleanType.FALSE, response.success());
        assertEquals(4, response.term());
        assertEquals(-1, voter.leaderId());
    }

    @Test
    void aMemberWhoseLogStartsAboveItsOnlyUsableSnapshotRefusesToStartAndKeepsItsLog()
    {
        electionState.save(3, ElectionStateStore.NO_VOTE);
        final UnsafeBuffer entry = new UnsafeBuffer(new byte[200]);
        for (int i = 0; i < 100; i++)
        {
            log.append(1, 7, entry, 0, entry.capacity());
        }
        log.flush();
        log.purge(8192, position -> 1);
        final long end = log.appendedPosition();
        voter = newVoter();
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> voter.startFromSnapshot(4096 - 224, 1));
        assertTrue(ex.getMessage().contains("the log is kept, not discarded"), ex.getMessage());
        assertEquals(end, log.appendedPosition(), "nothing the member may have acknowledged is gone");
    }

    @Test
    void aLogThatEndsBelowTheSnapshotRestartsThere()
    {
        electionState.save(3, ElectionStateStore.NO_VOTE);
        final UnsafeBuffer entry = new UnsafeBuffer(new byte[200]);
        for (int i = 0; i < 10; i++)
        {
            log.append(1, 7, entry, 0, entry.capacity());
        }
        log.flush();
        voter = newVoter();
        voter.startFromSnapshot(100_000, 3);
        assertEquals(100_000, log.startPosition());
        assertEquals(3, log.startTerm());
        assertEquals(100_000, voter.commitPosition(), "the snapshot's position is committed");
    }

    @Test
    void aMemberThatLostAcknowledgedFramesVotesAsIfItHeldThemAndStandsOnlyOnceItHasThemBack(@TempDir final Path dir)
        throws Exception
    {
        // What the leader holds, and what this member held and promised before a bit flipped on its disk.
        final ArchiveLogConfig leaderConfig = logConfig(dir.resolve("leader"));
        final long end;
        try (ArchiveRaftLog leaderLog = new ArchiveRaftLog(leaderConfig))
        {
            for (int i = 0; i < 50; i++)
            {
                leaderLog.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[200]), 0, 200);
            }
            leaderLog.flush();
            end = leaderLog.appendedPosition(); // durable and promised by the close (the sync runs on its thread)
        }
        copyTree(dir.resolve("leader"), dir.resolve("member"));
        try (RandomAccessFile segment = new RandomAccessFile(dir.resolve("member").resolve(
            "00000000000000000000.seg").toFile(), "rw"))
        {
            segment.seek(5000);
            segment.write(segment.read() ^ 0x10);
        }

        electionState.save(3, ElectionStateStore.NO_VOTE);
        try (ArchiveRaftLog damaged = new ArchiveRaftLog(logConfig(dir.resolve("member")));
            ArchiveRaftLog leaderLog = new ArchiveRaftLog(leaderConfig))
        {
            final long cut = damaged.pendingPosition();
            assertTrue(cut < 5000 && damaged.promisedPosition() == end, "cut at the damage, promise kept");
            voter = newVoter(damaged);

            voter.onRequestVote(4, 0, 3, cut, false, false);
            assertFalse(granted(), "a candidate as long as what is left, but short of the promise");
            voter.onRequestVote(5, 0, 3, end, false, false);
            assertTrue(granted(), "a candidate holding all that was promised");

            nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
            voter.doWork();
            assertEquals(Role.FOLLOWER, voter.role(), "it lacks entries it may have helped commit: it does not stand");

            // The leader sends the lost frames again; then it may stand like anyone else.
            leaderLog.readBlock(cut, end, 1 << 20, (buffer, offset, length, from, to) ->
                voter.onAppendRequest(5, 0, 1, cut, 3, 0, 0, 0, buffer, offset, length));
            voter.doWork();
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (damaged.durablePosition() < end && System.nanoTime() < deadline)
            {
                Thread.onSpinWait(); // the log syncs on a thread of its own
            }
            assertEquals(end, damaged.durablePosition());
            voter.doWork(); // acknowledges the durable position, and so holds its promise again
            nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
            voter.doWork();
            assertEquals(Role.CANDIDATE, voter.role());
        }
    }

    @Test
    void aWipedMemberThatHearsOfAPromotedEpochFromAPeerStillMayNotVote()
    {
        final List<Member> members = List.of(
            new Member(0, "h", 1, true), new Member(1, "h", 2, true), new Member(2, "h", 3, true));
        final ConsensusAgent wiped = new ConsensusAgent(ConsensusConfig.of(2, members, TimeoutProfile.LAN),
            () -> nowNs, () -> nowNs, transport, new SimLog(64 * 1024), new MemoryElectionState(),
            new Random(1));
        wiped.doWork();
        // The cluster was promoted to epoch 1 (members 0, 1 and 2 voting) before this member's data was lost; the
        // first peer it reaches tells it so. Only the tool's own promotion gives a member its vote.
        wiped.membershipExchange().onNotice(0, 1, 0, 0b111, 0);
        assertEquals(1, wiped.membership().epoch());
        assertFalse(wiped.clusterIdentity().mayElect(), "a notice is no reason to trust an empty log");
        transport.sent.clear();
        wiped.onRequestVote(Membership.firstTermOf(1) + 1, 0, 0, 0, false, false);
        assertTrue(transport.sent.isEmpty(), "no vote from an empty log");
    }

    private static ArchiveLogConfig logConfig(final Path dir)
    {
        return new ArchiveLogConfig().directory(dir).segmentLength(64 * 1024).maxBatchLength(16 * 1024)
            .durability(DurabilityPolicy.BATCH);
    }

    private static void copyTree(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> files = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                Files.copy(p, to.resolve(from.relativize(p).toString()));
            }
        }
    }

    private ConsensusAgent newVoter()
    {
        return newVoter(log);
    }

    private ConsensusAgent newVoter(final RaftLog raftLog)
    {
        final List<Member> members = List.of(
            new Member(0, "h", 1, true), new Member(1, "h", 2, true), new Member(2, "h", 3, true));
        final ConsensusAgent agent = new ConsensusAgent(ConsensusConfig.of(2, members, TimeoutProfile.LAN),
            () -> nowNs, () -> nowNs, transport, raftLog, electionState, new Random(1));
        agent.doWork();
        return agent;
    }

    private boolean granted()
    {
        return BooleanType.TRUE == lastVote().granted();
    }

    private VoteDecoder lastVote()
    {
        final UnsafeBuffer buffer = lastOf(VoteDecoder.TEMPLATE_ID);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        return new VoteDecoder().wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
            header.version());
    }

    private AppendResponseDecoder lastAppendResponse()
    {
        final UnsafeBuffer buffer = lastOf(AppendResponseDecoder.TEMPLATE_ID);
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        return new AppendResponseDecoder().wrap(
            buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
    }

    private UnsafeBuffer lastOf(final int templateId)
    {
        for (int i = transport.sent.size() - 1; i >= 0; i--)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(transport.sent.get(i).bytes());
            if (new MessageHeaderDecoder().wrap(buffer, 0).templateId() == templateId)
            {
                return buffer;
            }
        }
        throw new AssertionError("no message with template " + templateId + " was sent");
    }
}
