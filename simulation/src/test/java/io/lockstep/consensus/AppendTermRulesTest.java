package io.lockstep.consensus;

import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.codecs.AppendRequestEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotEncoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A follower takes no frames that cannot be a leader's log: terms that fall from one frame to the next, or rise
 * above the leader's own term; nor a snapshot whose term is above the leader's. Either, once on disk, would stop
 * the member, then and at every restart. A block longer than its log batch it takes in pieces, and a frame longer
 * than the batch it refuses, where both once stopped it. Driven message by message through the member's own
 * decoders.
 */
class AppendTermRulesTest
{
    private static final long LEADER_TERM = 5;
    private static final int FRAME = 64;

    private final ScriptedTransport transport = new ScriptedTransport();
    private final SimLog log = new SimLog(64 * 1024);
    private long nowNs = 1_000_000_000L;
    private ConsensusAgent member;

    @BeforeEach
    void aFollowerOfThree()
    {
        final MemoryElectionState electionState = new MemoryElectionState();
        electionState.save(3, ElectionStateStore.NO_VOTE);
        member = MemberOfThree.memberTwo(() -> nowNs, transport, log, electionState);
        member.doWork();
    }

    @Test
    void framesWhoseTermsFallAreRefusedAndTheMemberGoesOn()
    {
        deliverAppend(0, 0, 4, 3);

        assertEquals(0, log.pendingPosition(), "nothing of the block is taken");
        assertEquals(LEADER_TERM, member.term(), "the leader is still followed");
    }

    @Test
    void aFrameOfATermAboveTheLeadersIsRefused()
    {
        deliverAppend(0, 0, 5, LEADER_TERM + 1);

        assertEquals(0, log.pendingPosition(), "nothing of the block is taken");
    }

    @Test
    void aFrameBelowTheTermOfTheEntryBeforeItIsRefused()
    {
        deliverAppend(0, 0, 4);
        assertEquals(FRAME, log.pendingPosition(), "a frame of term 4 after none is taken");

        deliverAppend(FRAME, 4, 3);
        assertEquals(FRAME, log.pendingPosition(), "one of term 3 after it is not");
    }

    @Test
    void aRefusedBlockCutsNothingItWouldHaveReplaced()
    {
        deliverAppend(0, 0, 4, 4);
        assertEquals(2 * FRAME, log.pendingPosition());

        // Its frame at 64 conflicts with the one held there (term 3 against 4), and falls below the term before it.
        deliverAppend(FRAME, 4, 3);
        assertEquals(2 * FRAME, log.pendingPosition(), "the frame it would have replaced is still held");
    }

    @Test
    void framesOfRisingTermsUpToTheLeadersAreTaken()
    {
        deliverAppend(0, 0, 2, 2, 4, LEADER_TERM);

        assertEquals(4 * FRAME, log.pendingPosition(), "every frame is taken");
    }

    @Test
    void aSnapshotOfATermAboveTheLeadersIsNotTaken()
    {
        deliverChunk(LEADER_TERM + 1);
        assertEquals(3, member.term(), "the chunk is dropped before its term is looked at");
        assertEquals(-1, member.leaderId(), "nor its sender followed");

        deliverChunk(LEADER_TERM);
        assertEquals(LEADER_TERM, member.term(), "one of the leader's own term is taken");
        assertEquals(1, member.leaderId());
    }

    @Test
    void aChunkWhoseLengthReadsAsNegativeIsDroppedAndTheMemberGoesOn()
    {
        deliverChunk(LEADER_TERM, 0x8000_0000);
        assertEquals(3, member.term(), "dropped as malformed before its term is looked at");
        assertEquals(-1, member.leaderId());
    }

    @Test
    void aBlockLongerThanTheLogBatchIsTakenInPieces()
    {
        final SimLog smallBatch = followerWithBatch(3 * FRAME);

        deliverAppend(0, 0, 4, 4, 4, 4, 4, 4, 4, 4);

        assertEquals(8 * FRAME, smallBatch.pendingPosition(), "every frame is taken, a batch at a time");
        assertEquals(0, member.errors().total(), "nothing refused");

        deliverAppend(8 * FRAME, 4, 4);
        assertEquals(9 * FRAME, smallBatch.pendingPosition(), "the next block joins the last piece's frame");
    }

    @Test
    void aFrameLongerThanTheLogBatchIsRefusedAndTheMemberGoesOn()
    {
        final SimLog tinyBatch = followerWithBatch(FRAME / 2);

        deliverAppend(0, 0, 4);

        assertEquals(0, tinyBatch.pendingPosition(), "nothing of the block is taken");
        assertEquals(1, member.errors().recent().stream()
            .filter(e -> e.message().contains("longer than this member's log batch")).count());
    }

    @Test
    void theFramesBeforeABadOneAreTakenAndTheBadOneRefused()
    {
        final UnsafeBuffer frames = frames(0, 4, 4, 4, 4);
        frames.putLong(3 * FRAME + FrameDescriptor.POSITION_OFFSET, 12_345, LITTLE_ENDIAN); // says it is elsewhere

        deliver(0, 0, frames);

        assertEquals(3 * FRAME, log.pendingPosition(), "the three good frames are taken");
        assertEquals(1, member.errors().recent().stream()
            .filter(e -> e.message().contains("bad replicated frame")).count());
    }

    private SimLog followerWithBatch(final int maxBatchLength)
    {
        final SimLog log = new SimLog(maxBatchLength);
        final MemoryElectionState electionState = new MemoryElectionState();
        electionState.save(3, ElectionStateStore.NO_VOTE);
        member = MemberOfThree.memberTwo(() -> nowNs, transport, log, electionState);
        member.doWork();
        return log;
    }

    private void deliverChunk(final long snapshotTerm)
    {
        deliverChunk(snapshotTerm, 100);
    }

    /** @param claimedLength the chunk's length field (its data is 100 bytes whatever it says). */
    private void deliverChunk(final long snapshotTerm, final int claimedLength)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final InstallSnapshotEncoder chunk = new InstallSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(LEADER_TERM).leaderId(1).snapshotPosition(4096).snapshotTerm(snapshotTerm).chunkOffset(0)
            .totalLength(1000).configEpoch(0).configVersion(1).voters(0b111).learners(0)
            .putChunk(new byte[100], 0, 100);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + chunk.encodedLength()];
        buffer.putInt(bytes.length - 100 - Integer.BYTES, claimedLength, LITTLE_ENDIAN);
        buffer.getBytes(0, bytes);
        transport.deliver(1, bytes);
        nowNs += 1_000_000;
        assertDoesNotThrow(() -> member.doWork(), "the member goes on");
    }

    private void deliverAppend(final long prevPosition, final long prevTerm, final long... frameTerms)
    {
        deliver(prevPosition, prevTerm, frames(prevPosition, frameTerms));
    }

    private static UnsafeBuffer frames(final long prevPosition, final long... frameTerms)
    {
        final UnsafeBuffer frames = new UnsafeBuffer(new byte[frameTerms.length * FRAME]);
        for (int i = 0; i < frameTerms.length; i++)
        {
            final int o = i * FRAME;
            frames.putInt(o + FrameDescriptor.FRAME_LENGTH_OFFSET, FrameDescriptor.HEADER_LENGTH + 8, LITTLE_ENDIAN);
            frames.putLong(o + FrameDescriptor.TERM_OFFSET, frameTerms[i], LITTLE_ENDIAN);
            frames.putLong(o + FrameDescriptor.POSITION_OFFSET, prevPosition + o, LITTLE_ENDIAN);
            frames.putInt(o + FrameDescriptor.TYPE_OFFSET, LogEntryType.CLIENT_APPEND, LITTLE_ENDIAN);
        }
        return frames;
    }

    private void deliver(final long prevPosition, final long prevTerm, final UnsafeBuffer frames)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
        final AppendRequestEncoder encoder = new AppendRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(LEADER_TERM).leaderId(1).sequence(1).prevPosition(prevPosition).prevTerm(prevTerm)
            .commitPosition(0).configEpoch(0)
            .putLogBytes(frames, 0, frames.capacity());
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()];
        buffer.getBytes(0, bytes);
        transport.deliver(1, bytes);
        nowNs += 1_000_000;
        assertDoesNotThrow(() -> member.doWork(), "the member goes on");
    }
}
