package io.lockstep.consensus;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How a leader takes a follower's answers to the snapshot chunks it sends.
 */
class SnapshotTransferTest
{
    private static final long POSITION = 4096;
    private static final int CHUNK = 1024;

    private final SnapshotTransfer transfer = new SnapshotTransfer(null, 0, CHUNK, null);
    private final PeerState peer = new PeerState(2, true);

    @Test
    void aFollowerThatHoldsNoneOfItIsSentTheFirstChunkNextAfterTheChunksInFlightTimeOut()
    {
        sending(3 * CHUNK, 4 * CHUNK);

        transfer.onResponse(peer, POSITION, 0, false);

        assertEquals(0, peer.installAcked, "held: nothing, so a retry starts at the first chunk");
        assertEquals(4 * CHUNK, peer.installOffset, "the chunks in flight still fill the window: no resend at once");
    }

    @Test
    void aFollowerThatWantsItFromTheStartIsSentTheFirstChunkAtOnce()
    {
        sending(3 * CHUNK, 4 * CHUNK);

        transfer.onResponse(peer, POSITION, -1, false);

        assertEquals(0, peer.installAcked);
        assertEquals(0, peer.installOffset);
    }

    @Test
    void progressMovesTheAcknowledgedOffsetOnlyForward()
    {
        sending(3 * CHUNK, 4 * CHUNK);

        transfer.onResponse(peer, POSITION, 2 * CHUNK, false);
        assertEquals(3 * CHUNK, peer.installAcked, "an older answer arriving late takes nothing back");

        transfer.onResponse(peer, POSITION, 4 * CHUNK, false);
        assertEquals(4 * CHUNK, peer.installAcked);
        assertEquals(4 * CHUNK, peer.installOffset);
    }

    @Test
    void anAnswerAboutAnotherSnapshotChangesNothing()
    {
        sending(3 * CHUNK, 4 * CHUNK);

        transfer.onResponse(peer, POSITION + 1, 0, false);

        assertEquals(3 * CHUNK, peer.installAcked);
        assertEquals(4 * CHUNK, peer.installOffset);
    }

    private void sending(final long acked, final long offset)
    {
        peer.installPosition = POSITION;
        peer.installLength = 10 * CHUNK;
        peer.installAcked = acked;
        peer.installOffset = offset;
    }
}
