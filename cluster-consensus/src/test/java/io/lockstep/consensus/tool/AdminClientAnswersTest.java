package io.lockstep.consensus.tool;

import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.StatusRequestDecoder;
import io.lockstep.consensus.codecs.StatusResponseEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tool takes an answer only as the member it dialled: a peer at one member's address cannot speak for another.
 */
class AdminClientAnswersTest
{
    @Test
    void aStatusNamingAnotherMemberIsIgnoredAndSaid() throws Exception
    {
        final List<Member> members = List.of(new Member(0, "127.0.0.1", freePort(), true),
            new Member(1, "127.0.0.1", freePort(), true));
        // Listens at member 0's address and answers as member 0 or as member 1, as it is told.
        final TcpTransport peer = new TcpTransport(0, members, 0, 1 << 20, null, MemberProtocolShapes.create());
        final int[] answerAs = { 1 };
        final Thread thread = new Thread(() -> answerStatus(peer, answerAs));
        thread.setDaemon(true);
        thread.start();
        try (AdminClient tool = new AdminClient(members))
        {
            final Map<Integer, AdminClient.Status> forged = tool.status(2_000);
            assertTrue(forged.isEmpty(), "member 0 spoke for member 1: " + forged.keySet());
            assertNotNull(tool.lastProblem());
            assertTrue(tool.lastProblem().startsWith("member 0 answered as member 1: its answer is ignored"),
                tool.lastProblem());

            answerAs[0] = 0;
            final Map<Integer, AdminClient.Status> own = tool.status(2_000);
            assertEquals(List.of(0), List.copyOf(own.keySet()), "its own answer is taken");
            assertEquals(Role.LEADER, own.get(0).role());
        }
        finally
        {
            thread.interrupt();
            thread.join(5_000);
        }
    }

    /** A member's side of the status request, reduced to the answer, until the thread is interrupted. */
    private static void answerStatus(final TcpTransport peer, final int[] answerAs)
    {
        final UnsafeBuffer out = new UnsafeBuffer(new byte[256]);
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final StatusRequestDecoder request = new StatusRequestDecoder();
        try
        {
            while (!Thread.currentThread().isInterrupted())
            {
                final long now = System.nanoTime();
                peer.poll(now, (from, buffer, offset, length) ->
                {
                    header.wrap(buffer, offset);
                    if (StatusRequestDecoder.TEMPLATE_ID != header.templateId())
                    {
                        return;
                    }
                    request.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
                        header.version());
                    final StatusResponseEncoder response = new StatusResponseEncoder()
                        .wrapAndApplyHeader(out, 0, new MessageHeaderEncoder())
                        .correlationId(request.correlationId()).memberId(answerAs[0]).role(Role.LEADER).term(1)
                        .leaderId(answerAs[0]).logPosition(0).commitPosition(0).logStartPosition(0)
                        .snapshotPosition(0).appliedPosition(0).stateHash(0).configEpoch(0).configVersion(0)
                        .voters(0).learners(0);
                    response.peersCount(0);
                    peer.send(from, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + response.encodedLength());
                });
                peer.flush(now);
                Thread.onSpinWait();
            }
        }
        finally
        {
            peer.close();
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
