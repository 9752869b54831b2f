package io.lockstep.archive;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower's batch holds only the header of a padding frame but advances the log to the segment end, so a batch
 * covers more log than its length. With a batch bound near a whole segment, a follower that takes several blocks
 * before it writes could cover two segment ends in one batch, which a write cannot do, and stopped with "batch
 * crosses two segment ends". Such frames now wait for the next batch: copying through many rollovers keeps every
 * frame, with the bound at a whole segment and frames up to the largest, where padding is largest.
 */
class FollowerBatchTest
{
    private static final int SEGMENT = 16 * 1024;

    @TempDir
    Path dir;

    @Test
    void aFollowerCopyingBlocksThroughRolloversKeepsEveryFrameWhateverItsBatchBound()
    {
        for (long seed = 1; seed <= 8; seed++)
        {
            copyThroughRollovers(seed, SEGMENT);
            copyThroughRollovers(seed, SEGMENT / 2);
        }
    }

    private void copyThroughRollovers(final long seed, final int maxBatch)
    {
        final Path leaderDir = dir.resolve("leader" + seed + "-" + maxBatch);
        final Path followerDir = dir.resolve("follower" + seed + "-" + maxBatch);
        final ArchiveLogConfig leaderConfig = new ArchiveLogConfig().directory(leaderDir)
            .segmentLength(SEGMENT).maxBatchLength(maxBatch).durability(DurabilityPolicy.NONE);
        final ArchiveLogConfig followerConfig = new ArchiveLogConfig().directory(followerDir)
            .segmentLength(SEGMENT).maxBatchLength(maxBatch).durability(DurabilityPolicy.NONE);
        final int frames = 1500;
        final Random random = new Random(seed);
        try (ArchiveLog leader = ArchiveLog.open(leaderConfig); ArchiveLog follower = ArchiveLog.open(followerConfig);
            LogReader blocks = leader.newReader(0))
        {
            for (int i = 0; i < frames; i++)
            {
                // Lengths up to the largest payload: a frame that does not fit a segment's end leaves a large padding.
                TestFrames.append(leader, 1, 1,
                    TestFrames.payload(seed, i, TestFrames.lengthFor(seed, i, leader.maxPayloadLength())));
            }
            leader.flush();
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[SEGMENT]);
            final int[] copied = new int[1];
            while (follower.pendingPosition() < leader.appendedPosition())
            {
                // Blocks of one frame or a few, as a leader sends them.
                copied[0] = 0;
                blocks.readBlock((DirectBuffer buffer, int offset, int length, long start, long end) ->
                {
                    copy.putBytes(0, buffer, offset, length);
                    copied[0] = length;
                }, Long.MAX_VALUE, 32 + random.nextInt(maxBatch - 32));
                assertTrue(copied[0] > 0, "the leader's reader hands out a block");
                if (ArchiveLog.BACK_PRESSURED == follower.appendFrames(copy, 0, copied[0]))
                {
                    follower.flush();
                    assertTrue(follower.appendFrames(copy, 0, copied[0]) >= 0, "a block fits an empty batch");
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
