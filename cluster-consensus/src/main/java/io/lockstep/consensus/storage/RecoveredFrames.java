package io.lockstep.consensus.storage;

import io.lockstep.archive.FrameDescriptor;
import io.lockstep.archive.FrameHandler;
import io.lockstep.consensus.LogClock;
import io.lockstep.consensus.RaftLog;
import io.lockstep.consensus.log.MembershipChangeDecoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.LongArrayList;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;

/**
 * What a member needs from every frame of its log at start, noted while recovery checks them as the log opens, so
 * that a restart reads the log once and not twice (on a 10 GiB log each pass took about 2.3 s with the page cache
 * warm). The member's pass ({@code FollowerLog.rebuildTermIndex}) wants where each term starts, every membership
 * change, and the latest log time: this keeps the positions of the frames that carry them (the first frame of each
 * term, every padding frame, each membership change, the frame with the latest timestamp), and the member then
 * reads only those frames. Every other frame would change nothing there. Opening thread only.
 */
final class RecoveredFrames implements FrameHandler
{
    private final LongArrayList positions = new LongArrayList();
    private long lastTerm = Long.MIN_VALUE;
    /** Where the frame after the last one given starts: a frame given further on follows a padding frame. */
    private long nextPosition = -1;
    private long latestTimestamp = Long.MIN_VALUE;
    private long latestTimestampPosition = -1;
    private long startPosition = -1;
    private long endPosition = -1;

    public void onFrame(
        final DirectBuffer buffer, final int offset, final int length, final long framePosition, final long term,
        final int frameType)
    {
        final int frameOffset = offset - HEADER_LENGTH;
        if (nextPosition >= 0 && nextPosition != framePosition)
        {
            // Recovery gives no padding frames, but a member's pass sees them, and a padding frame's term is the
            // one of the frame it was written for, which may have been cut since: every padding frame is noted (one
            // a segment), and read as it is.
            positions.addLong(nextPosition);
        }
        if (term != lastTerm || MembershipChangeDecoder.TEMPLATE_ID == frameType)
        {
            positions.addLong(framePosition);
            lastTerm = term;
        }
        nextPosition = framePosition + FrameDescriptor.alignedFrameLength(length);
        if (LogClock.isTimestamped(buffer, frameOffset, frameType))
        {
            final long timestamp = LogClock.timestampOf(buffer, frameOffset);
            if (timestamp >= latestTimestamp)
            {
                latestTimestamp = timestamp;
                latestTimestampPosition = framePosition;
            }
        }
    }

    /** The log as recovery left it: what was noted covers exactly this much. */
    void opened(final long start, final long end)
    {
        startPosition = start;
        endPosition = end;
        if (nextPosition >= 0 && nextPosition < end)
        {
            positions.addLong(nextPosition); // a padding frame ends the log: its frame was cut
        }
    }

    /**
     * @return the positions of the frames to read, in log order, or null if the log no longer starts and ends where
     * recovery left it (a purge or a reset since): then every frame must be read.
     */
    LongArrayList framesToRead(final RaftLog log)
    {
        if (startPosition < 0 || log.startPosition() != startPosition || log.pendingPosition() != endPosition)
        {
            return null;
        }
        if (endPosition > startPosition && (positions.isEmpty() || positions.getLong(0) > startPosition))
        {
            positions.addLong(0, startPosition); // a padding frame starts the log
        }
        if (latestTimestampPosition >= 0)
        {
            int i = 0;
            while (i < positions.size() && positions.getLong(i) < latestTimestampPosition)
            {
                i++;
            }
            if (i == positions.size() || positions.getLong(i) != latestTimestampPosition)
            {
                positions.addLong(i, latestTimestampPosition);
            }
        }
        return positions;
    }
}
