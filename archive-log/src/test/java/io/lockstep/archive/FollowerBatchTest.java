package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower's batch holds only the header of a padding frame but advances the log to the segment end, so a batch
 * counts fewer bytes than the log positions it covers. With a batch bound above half a segment, a follower copying
 * blocks as a leader sends them could cover two segment ends in one batch, which a write cannot do, and stopped
 * with "batch crosses two segment ends". The bound is at most half a segment, and copying through many rollovers,
 * flushing only when the batch is full, keeps every frame.
 */
class FollowerBatchTest
{
    private static final int SEGMENT = 16 * 1024;

    @TempDir
    Path dir;

    @Test
    void aBatchBoundAboveHalfASegmentIsRefusedWithTheReason()
    {
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new ArchiveLogConfig()
            .directory(dir).segmentLength(SEGMENT).maxBatchLength(SEGMENT / 2 + 32).validate());
        assertTrue(refused.getMessage().contains("half"), refused.getMessage());
        new ArchiveLogConfig().directory(dir).segmentLength(SEGMENT).maxBatchLength(SEGMENT / 2).validate();
    }

    @Test
    void aFollowerCopyingBlocksThroughRolloversWithFullBatchesKeepsEveryFrame()
    {
        for (long seed = 1; seed <= 8; seed++)
        {
            copyThroughRollovers(seed, SEGMENT / 2);
        }
    }

    private void copyThroughRollovers(final long seed, final int followerMaxBatch)
    {
        final Path leaderDir = dir.resolve("leader" + seed);
        final Path followerDir = dir.resolve("follower" + seed);
        final ArchiveLogConfig leaderConfig = new ArchiveLogConfig().directory(leaderDir)
            .segmentLength(SEGMENT).maxBatchLength(SEGMENT / 2).durability(DurabilityPolicy.NONE);
        final ArchiveLogConfig followerConfig = new ArchiveLogConfig().directory(followerDir)
            .segmentLength(SEGMENT).maxBatchLength(followerMaxBatch).durability(DurabilityPolicy.NONE);
        final int frames = 3000;
        final java.util.Random random = new java.util.Random(seed);
        try (ArchiveLog leader = ArchiveLog.open(leaderConfig); ArchiveLog follower = ArchiveLog.open(followerConfig);
            LogReader blocks = leader.newReader(0))
        {
            for (int i = 0; i < frames; i++)
            {
                // Lengths up to a quarter segment: some do not fit a segment's end, so padding is frequent.
                TestFrames.append(leader, 1, 1, TestFrames.payload(seed, i, TestFrames.lengthFor(seed, i, SEGMENT / 4)));
            }
            leader.flush();
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[SEGMENT]);
            final int[] copied = new int[1];
            while (follower.pendingPosition() < leader.appendedPosition())
            {
                // Blocks of one frame to a few, as a leader sends them.
                copied[0] = 0;
                blocks.readBlock((DirectBuffer buffer, int offset, int length, long start, long end) ->
                {
                    copy.putBytes(0, buffer, offset, length);
                    copied[0] = length;
                }, Long.MAX_VALUE, 32 + random.nextInt(SEGMENT / 4));
                assertTrue(copied[0] > 0, "the leader's reader hands out a block");
                while (ArchiveLog.BACK_PRESSURED == follower.appendFrames(copy, 0, copied[0]))
                {
                    follower.flush();
                }
                if (0 == random.nextInt(3))
                {
                    // The end of a duty cycle: a batch then starts at any block, a lone padding frame included.
                    follower.flush();
                }
            }
            follower.flush();
            final List<TestFrames.Frame> expected = TestFrames.readAll(leader, 0);
            final List<TestFrames.Frame> actual = TestFrames.readAll(follower, 0);
            assertEquals(frames, expected.size());
            assertEquals(expected.size(), actual.size(), "seed " + seed);
            for (int i = 0; i < expected.size(); i++)
            {
                assertEquals(expected.get(i).position(), actual.get(i).position(), "seed " + seed + " frame " + i);
                assertArrayEquals(expected.get(i).payload(), actual.get(i).payload(), "seed " + seed + " frame " + i);
            }
        }
    }
}
