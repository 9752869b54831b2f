package io.lockstep.consensus;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.archive.LogFormat;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.RequestVoteDecoder;
import io.lockstep.consensus.codecs.RequestVoteEncoder;
import io.lockstep.consensus.codecs.VoteDecoder;
import io.lockstep.consensus.codecs.VoteEncoder;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules by which a member of five that owes lost frames decides, from the others' answers, what was never
 * committed (OwedFrames), driven message by message through the member's own decoders.
 */
class OwedFramesTest
{
    private static final int ME = 4;
    private static final int FRAMES = 50;

    @TempDir
    Path dir;

    private final ScriptedTransport transport = new ScriptedTransport();
    private final MemoryElectionState electionState = new MemoryElectionState();
    /** The cluster identity the answers carry (the member's own is 7, 9). */
    private long answerIdentityHigh = 7;
    private long nowNs = 1_000_000_000L;
    private ArchiveRaftLog log;
    private ConsensusAgent member;
    private long cut;
    private long promised;

    @BeforeEach
    void aMemberThatLostFramesItPromised() throws Exception
    {
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(dir.resolve("log")).segmentLength(64 * 1024)
            .maxBatchLength(16 * 1024).durability(DurabilityPolicy.BATCH);
        try (ArchiveRaftLog before = new ArchiveRaftLog(config))
        {
            for (int i = 0; i < FRAMES; i++)
            {
                before.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[200]), 0, 200);
            }
            before.flush();
        }
        try (RandomAccessFile segment = new RandomAccessFile(dir.resolve("log").resolve(
            "00000000000000000000.seg").toFile(), "rw"))
        {
            segment.seek(5000);
            segment.write(segment.read() ^ 0x10);
        }
        electionState.saveIdentity(new ClusterIdentity(7, 9, true, true));
        electionState.save(3, ElectionStateStore.NO_VOTE);
        log = new ArchiveRaftLog(config);
        cut = log.pendingPosition();
        promised = log.promisedPosition();
        assertTrue(cut < 5000 && promised > 10_000, "cut at " + cut + ", promised " + promised);
        member = new ConsensusAgent(ConsensusConfig.of(ME, fiveMembers(), TimeoutProfile.LAN), () -> nowNs, () -> nowNs,
            transport, log, electionState, new Random(1));
        member.doWork();
    }

    @AfterEach
    void close()
    {
        log.close();
    }

    @Test
    void itReleasesOnlyOnceEveryOtherVoterSaidItHeldNothingThere()
    {
        final long round = ask();
        answer(0, round, true, 0, cut - 1000, cut);
        answer(1, round, true, 0, cut, cut);
        answer(2, round, true, 0, 200, 200);
        assertEquals(promised, log.promisedPosition(), "three of four answered: the fourth may hold the frames");
        answer(3, round, true, 0, 300, cut + 500);
        assertEquals(cut + 500, log.promisedPosition(), "down to the furthest other voter's reach, above its log");
        assertEquals(3, log.promisedTerm(), "the promised term is kept: the frame's own is unknown");
        assertEquals(1, member.metrics().get(MemberMetrics.OWED_FRAMES_RELEASED));
        assertEquals(1, member.metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE),
            "what is left is held by no voter's log (member 3 only promised it)");

        final long next = ask();
        answer(0, next, true, 0, cut, cut);
        answer(1, next, true, 0, cut, cut);
        answer(2, next, true, 0, 200, 200);
        answer(3, next, true, 0, 300, 300);
        assertEquals(cut, log.promisedPosition(), "the next round finds no one past its log: it owes nothing");
        assertEquals(3, log.promisedTerm(), "the term of its log's last frame");
        member.doWork();
        assertEquals(0, member.metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE));
    }

    @Test
    void anAnswerNoOneCanVouchForAnotherConfigurationAnOldRoundOrAnotherClusterReleasesNothing()
    {
        final long round = ask();
        answer(0, round, true, 0, 0, 0);
        answer(1, round, true, 0, 0, 0);
        answer(2, round, true, 0, 0, 0);
        answer(3, round, false, 0, 0, 0);
        assertEquals(promised, log.promisedPosition(), "a wiped or restored voter may have acknowledged them");

        final long second = ask();
        answer(0, second, true, 0, 0, 0);
        answer(1, second, true, 0, 0, 0);
        answer(2, second, true, 0, 0, 0);
        answer(3, second, true, 7, 0, 0);
        assertEquals(promised, log.promisedPosition(), "a voter on another configuration");

        final long third = ask();
        for (int id = 0; id < 4; id++)
        {
            answer(id, second, true, 0, 0, 0);
        }
        assertEquals(promised, log.promisedPosition(), "answers to an older round may describe logs before a loss");

        answerIdentityHigh = 8;
        for (int id = 0; id < 4; id++)
        {
            answer(id, third, true, 0, 0, 0);
        }
        assertEquals(promised, log.promisedPosition(), "voters of another cluster, at the configured addresses");
        assertEquals(0, member.metrics().get(MemberMetrics.OWED_FRAMES_RELEASED));
    }

    @Test
    void aFrameAnotherVoterPromisedIsKeptAndNamedAsHeldNowhere()
    {
        final long round = ask();
        answer(0, round, true, 0, cut, promised);
        answer(1, round, true, 0, 200, 200);
        answer(2, round, true, 0, 200, 200);
        answer(3, round, true, 0, 200, 200);
        assertEquals(promised, log.promisedPosition(), "member 0 may have acknowledged them too: maybe committed");
        assertEquals(1, member.metrics().get(MemberMetrics.OWED_FRAMES_HELD_NOWHERE));
        final String named = member.errors().recent().get(0).message();
        assertTrue(named.contains("from position " + cut + " to " + promised) && named.contains("member 0"), named);
    }

    @Test
    void aQuestionIsAnsweredWithWhatTheLogHoldsAndIsNoVote()
    {
        final VoteDecoder vote = question(member);
        assertEquals(77, vote.holdingsRound());
        assertEquals(BooleanType.FALSE, vote.granted(), "a question is no vote, whatever the asker's log");
        assertEquals(BooleanType.TRUE, vote.holdingsKnown(), "a member of a sealed cluster with its promise");
        assertEquals(cut, vote.logPosition());
        assertEquals(3, vote.lastLogTerm());
        assertEquals(promised, vote.promisedPosition());
        assertEquals(7, vote.clusterIdHigh());
        assertEquals(3, member.term(), "answering raises no term");
        assertEquals(ElectionStateStore.NO_VOTE, electionState.votedFor(), "and casts no vote");
    }

    @Test
    void aMemberWhosePromiseWasLostDoesNotVouchAcrossRestartsUntilItHoldsACommittedLogAgain() throws Exception
    {
        final ArchiveLogConfig config = new ArchiveLogConfig().directory(dir.resolve("lost")).segmentLength(64 * 1024)
            .maxBatchLength(16 * 1024).durability(DurabilityPolicy.BATCH);
        try (ArchiveRaftLog before = new ArchiveRaftLog(config))
        {
            before.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[200]), 0, 200);
            before.flush();
        }
        Files.delete(config.directory().resolve(LogFormat.PROMISE_FILE));
        for (int restart = 0; restart < 2; restart++)
        {
            new ArchiveRaftLog(config).close();
        }
        try (ArchiveRaftLog lost = new ArchiveRaftLog(config))
        {
            assertEquals("missing", lost.promiseLost(), "a new promise was made at the first start, yet not trusted");
            final ConsensusAgent restarted = new ConsensusAgent(ConsensusConfig.of(ME, fiveMembers(),
                TimeoutProfile.LAN), () -> nowNs, () -> nowNs, transport, lost, electionState, new Random(1));
            assertEquals(BooleanType.FALSE, question(restarted).holdingsKnown(),
                "two restarts later it still cannot say what it acknowledged before");
            assertEquals(1, restarted.metrics().get(MemberMetrics.LOG_PROMISE_LOST));

            // The member started in term 3: a leader of term 3 may still count an acknowledgement it gave before
            // the loss, so only a commit of a later term, held durably, shows its log holds every committed frame.
            final ClusterFormation formation = new ClusterFormation(ME, electionState, lost,
                new Membership(ConsensusConfig.of(ME, fiveMembers(), TimeoutProfile.LAN), electionState),
                new MemberErrors(() -> 0L, new MemberMetrics()));
            final TermIndex termIndex = new TermIndex();
            termIndex.onFrame(3, 0);
            lost.append(3, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[200]), 0, 200);
            awaitDurable(lost);
            formation.onCommit(lost.pendingPosition(), 3, termIndex);
            assertEquals("missing", lost.promiseLost(), "a commit of the term it started in shows nothing");

            electionState.save(4, 0); // it voted for member 0, which won term 4
            termIndex.onFrame(4, lost.pendingPosition());
            lost.append(4, LogEntryType.CLIENT_APPEND, new UnsafeBuffer(new byte[200]), 0, 200);
            formation.onCommit(lost.pendingPosition() + 200, 4, termIndex);
            assertEquals("missing", lost.promiseLost(), "a commit beyond what its log holds shows nothing");
            awaitDurable(lost);
            formation.onCommit(lost.pendingPosition(), 4, termIndex);
            assertNull(lost.promiseLost(), "it durably holds a later leader's committed log: every committed frame");
        }
        try (ArchiveRaftLog kept = new ArchiveRaftLog(config))
        {
            assertNull(kept.promiseLost(), "and says so across the next start");
            final ConsensusAgent restarted = new ConsensusAgent(ConsensusConfig.of(ME, fiveMembers(),
                TimeoutProfile.LAN), () -> nowNs, () -> nowNs, transport, kept, electionState, new Random(1));
            assertEquals(BooleanType.TRUE, question(restarted).holdingsKnown());
            assertEquals(0, restarted.metrics().get(MemberMetrics.LOG_PROMISE_LOST));
        }
    }

    /** Flush and wait, bounded, until the log's sync thread has made it durable and promised it. */
    private static void awaitDurable(final ArchiveRaftLog log)
    {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (log.promisedPosition() < log.pendingPosition() && System.nanoTime() < deadline)
        {
            log.flush();
            Thread.onSpinWait();
        }
        assertEquals(log.pendingPosition(), log.promisedPosition(), "synced within 10 s");
    }

    /** Member 1 asks what the member holds (round 77): @return the member's answer. */
    private VoteDecoder question(final ConsensusAgent asked)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final RequestVoteEncoder question = new RequestVoteEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).term(9).candidateId(1).lastLogTerm(3)
            .lastLogPosition(cut + 100_000).preVote(BooleanType.TRUE).transfer(BooleanType.FALSE).configEpoch(0)
            .holdingsRound(77);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + question.encodedLength()];
        buffer.getBytes(0, bytes);
        transport.sent.clear();
        transport.deliver(1, bytes);
        asked.doWork();

        final UnsafeBuffer answer = new UnsafeBuffer(transport.sent.get(0).bytes());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(answer, 0);
        return new VoteDecoder().wrap(answer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
            header.version());
    }

    private static List<Member> fiveMembers()
    {
        final List<Member> members = new ArrayList<>();
        for (int i = 0; i < 5; i++)
        {
            members.add(new Member(i, "h", 1 + i, true));
        }
        return members;
    }

    @Test
    void withTwoVotersTheOtherIsNoQuorumAndNobodyIsAsked()
    {
        final List<Member> two = List.of(new Member(0, "h", 1, true), new Member(ME, "h", 5, true));
        final ConsensusAgent pair = new ConsensusAgent(ConsensusConfig.of(ME, two, TimeoutProfile.LAN), () -> nowNs,
            () -> nowNs, transport, log, electionState, new Random(1));
        pair.doWork();
        transport.sent.clear();
        nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
        pair.doWork();
        assertTrue(transport.sent.stream().noneMatch(m -> RequestVoteDecoder.TEMPLATE_ID ==
            new MessageHeaderDecoder().wrap(new UnsafeBuffer(m.bytes()), 0).templateId()),
            "one other voter cannot outweigh this member's acknowledgement: it does not ask");
        assertEquals(promised, log.promisedPosition());
    }

    /** The member's election timeout passes with no leader: it asks every other voter. @return the round. */
    private long ask()
    {
        transport.sent.clear();
        nowNs += 10 * TimeoutProfile.LAN.electionTimeoutNs();
        member.doWork();
        long round = -1;
        int asked = 0;
        for (final ScriptedTransport.Sent message : transport.sent)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(message.bytes());
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            if (header.templateId() == RequestVoteDecoder.TEMPLATE_ID)
            {
                final RequestVoteDecoder request = new RequestVoteDecoder().wrap(buffer,
                    MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                assertTrue(request.holdingsRound() > 0 && BooleanType.TRUE == request.preVote());
                round = request.holdingsRound();
                asked++;
            }
        }
        assertEquals(4, asked, "every other voter is asked");
        assertEquals(3, member.term(), "asking raises no term");
        return round;
    }

    private void answer(
        final int voter, final long round, final boolean known, final long configVersion, final long logPosition,
        final long promisedPosition)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final VoteEncoder vote = new VoteEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(3).voterId(voter).candidateTerm(4).granted(BooleanType.FALSE).preVote(BooleanType.TRUE)
            .configEpoch(0).mayElect(BooleanType.TRUE).holdingsRound(round).holdingsKnown(known ?
                BooleanType.TRUE : BooleanType.FALSE).configVersion(configVersion).logPosition(logPosition)
            .promisedPosition(promisedPosition).clusterIdHigh(answerIdentityHigh).clusterIdLow(9).lastLogTerm(3);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + vote.encodedLength()];
        buffer.getBytes(0, bytes);
        transport.deliver(voter, bytes);
        member.doWork();
    }
}
