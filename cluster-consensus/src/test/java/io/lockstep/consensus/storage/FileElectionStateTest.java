package io.lockstep.consensus.storage;

import io.lockstep.consensus.ElectionStateStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

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
}
