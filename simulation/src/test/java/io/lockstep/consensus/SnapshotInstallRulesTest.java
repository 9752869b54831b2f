package io.lockstep.consensus;

import io.lockstep.consensus.codecs.InstallSnapshotEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a follower takes of a leader's snapshot chunks: one file's chunks only, whatever a later chunk says;
 * nothing at all from a leader of an older term; and no snapshot its disk, or its heap, has no room for. Driven
 * message by message, with the file snapshot store.
 */
class SnapshotInstallRulesTest
{
    private static final long OWN_HIGH = 7;
    private static final long OWN_LOW = 9;

    @TempDir
    Path dir;

    private final ScriptedTransport transport = new ScriptedTransport();
    private final MemoryElectionState electionState = new MemoryElectionState();
    private FileSnapshotStorage storage;
    private ConsensusAgent member;

    @BeforeEach
    void aMemberWithASnapshotStore()
    {
        electionState.saveIdentity(new ClusterIdentity(OWN_HIGH, OWN_LOW, true, true));
        electionState.save(3, ElectionStateStore.NO_VOTE);
        member = MemberOfThree.memberTwo(() -> 1_000_000_000L, transport, new SimLog(64 * 1024), electionState);
        storage = new FileSnapshotStorage(dir);
        member.attachService(storage, null);
        member.doWork();
    }

    @AfterEach
    void close()
    {
        storage.close();
    }

    @Test
    void aChunkThatDisagreesWithTheInstallUnderWayStartsItAgainInsteadOfStoppingTheMember()
    {
        deliverChunk(5, 1, 0, 1000);
        assertEquals(100, answeredOffset(), "the first chunk is taken");

        deliverChunk(5, 1, 100, 200); // the same snapshot position, but now a file of 200 bytes
        assertEquals(-1, answeredOffset(), "a chunk of another file: start again");
        assertEquals(-1, storage.durablePosition(), "nothing recorded");

        deliverChunk(6, 0, 100, 1000); // a new leader's chunk, at the offset the old one had reached
        assertEquals(-1, answeredOffset(), "another leader's chunk does not continue this one's file");
        assertEquals(6, member.term(), "the new leader is followed");
    }

    @Test
    void aStaleLeadersChunkChangesNothing()
    {
        deliverChunk(2, 1, 0, 1000);
        assertEquals(-1, answeredOffset(), "answered with this member's newer term");
        assertEquals(3, member.term());
        assertEquals(0, member.membership().version(), "its configuration is not taken");
    }

    @Test
    void aSnapshotTheDiskHasNoRoomForIsNotWrittenAndTheLeaderIsAskedToWait()
    {
        final long tooLarge = Long.MAX_VALUE / 4;
        deliverChunk(5, 1, 0, tooLarge);
        assertEquals(0, answeredOffset(), "refused for room: asked to wait, not to start again at once (-1)");
        assertFalse(Files.exists(dir.resolve("snapshots").resolve("install.tmp")), "nothing of it written");
        assertEquals(5, member.term(), "the leader is followed all the same");

        deliverChunk(5, 1, 100, tooLarge);
        assertEquals(0, answeredOffset(), "a later chunk of the refused snapshot is answered the same way");

        deliverChunk(5, 1, 0, 1000);
        assertEquals(100, answeredOffset(), "a snapshot that fits is taken");
        assertTrue(Files.exists(dir.resolve("snapshots").resolve("install.tmp")));
    }

    @Test
    void aSnapshotLargerThanTheHeapCanReadIsNotWrittenAndTheLeaderIsAskedToWait()
    {
        final long tooLarge = storage.maxImageBytes() + 1;
        // Only a disk with room for it tells a refusal for the heap from one for the disk.
        assumeTrue(tooLarge + SnapshotTransfer.INSTALL_HEADROOM_BYTES < dir.toFile().getUsableSpace(),
            "the disk has room for more than half this JVM's heap");
        deliverChunk(5, 1, 0, tooLarge);
        assertEquals(0, answeredOffset(), "refused: asked to wait");
        assertEquals(1, member.errors().recent().stream()
            .filter(e -> e.message().contains("larger than this member reads into its heap")).count());
        assertFalse(Files.exists(dir.resolve("snapshots").resolve("install.tmp")), "nothing of it written");

        deliverChunk(5, 1, 0, 1000);
        assertEquals(100, answeredOffset(), "a snapshot that fits is taken");
    }

    /** A chunk of 100 bytes of a snapshot at 4,096, under configuration version 1. */
    private void deliverChunk(final long term, final int leader, final long offset, final long totalLength)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final InstallSnapshotEncoder chunk = new InstallSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term).leaderId(leader).snapshotPosition(4096).snapshotTerm(2).chunkOffset(offset)
            .totalLength(totalLength).configEpoch(0).configVersion(1).voters(0b111).learners(0)
            .clusterIdHigh(OWN_HIGH).clusterIdLow(OWN_LOW)
            .putChunk(new byte[100], 0, 100);
        final byte[] bytes = new byte[MessageHeaderEncoder.ENCODED_LENGTH + chunk.encodedLength()];
        buffer.getBytes(0, bytes);
        transport.sent.clear();
        transport.deliver(leader, bytes);
        member.doWork();
    }

    /** @return the next offset this member last asked for, in its answer to a chunk. */
    private long answeredOffset()
    {
        long offset = Long.MIN_VALUE;
        for (final ScriptedTransport.Sent message : transport.sent)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(message.bytes());
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            if (InstallSnapshotResponseDecoder.TEMPLATE_ID == header.templateId())
            {
                offset = new InstallSnapshotResponseDecoder().wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH,
                    header.blockLength(), header.version()).nextOffset();
            }
        }
        return offset;
    }
}
