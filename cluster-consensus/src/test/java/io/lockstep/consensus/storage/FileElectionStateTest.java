package io.lockstep.consensus.storage;

import io.lockstep.consensus.ClusterIdentity;
import io.lockstep.consensus.ElectionStateStore;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FileElectionStateTest
{
    @TempDir
    Path dir;

    @Test
    void termAndVoteSurviveReopening()
    {
        final FileElectionState state = new FileElectionState(dir);
        assertEquals(0, state.term());
        assertEquals(ElectionStateStore.NO_VOTE, state.votedFor());
        state.save(7, 2);
        final FileElectionState reopened = new FileElectionState(dir);
        assertEquals(7, reopened.term());
        assertEquals(2, reopened.votedFor());
    }

    @Test
    void aDamagedFileStopsTheMemberFromStarting() throws Exception
    {
        new FileElectionState(dir).save(7, 2);
        final Path file = dir.resolve(FileElectionState.FILE_NAME);
        final byte[] bytes = Files.readAllBytes(file);
        bytes[9] ^= 1;
        Files.write(file, bytes);
        final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> new FileElectionState(dir));
        assertTrue(ex.getMessage().contains("damaged"), ex.getMessage());
    }

    @Test
    void theClusterIdentitySurvivesReopeningAndLaterSavesKeepIt()
    {
        final FileElectionState state = new FileElectionState(dir);
        assertEquals(ClusterIdentity.NONE, state.identity(), "a new member's");
        final ClusterIdentity identity = new ClusterIdentity(0x1234L, -5L, true, true);
        state.saveIdentity(identity);
        state.save(9, 1);
        state.saveMembership(1, 2, 0b111, 0);
        final FileElectionState reopened = new FileElectionState(dir);
        assertEquals(identity, reopened.identity());
        assertEquals(9, reopened.term());
        assertEquals(1, reopened.configEpoch());
    }

    @Test
    void aFileWrittenBeforeIdentitiesReadsAsAMemberOfAFormedCluster() throws Exception
    {
        // Schema version 3: header, then term, vote, epoch, voters, learners, configuration version; then the CRC.
        final int length = 8 + 44;
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length + 4]);
        buffer.putShort(0, (short)44, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(2, (short)20, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(4, (short)102, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(6, (short)3, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(8, 12, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(16, 2, ByteOrder.LITTLE_ENDIAN);
        final CRC32C crc = new CRC32C();
        crc.update(buffer.byteArray(), 0, length);
        buffer.putInt(length, (int)crc.getValue(), ByteOrder.LITTLE_ENDIAN);
        Files.write(dir.resolve(FileElectionState.FILE_NAME), buffer.byteArray());

        final FileElectionState state = new FileElectionState(dir);
        assertEquals(12, state.term());
        assertEquals(2, state.votedFor());
        assertEquals(ClusterIdentity.FORMED_BEFORE_IDENTITIES, state.identity(),
            "it took part under the old rules: it keeps voting, and takes its next leader's identity");
    }
}
