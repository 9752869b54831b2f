package io.lockstep.cluster.transport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The member secret proves that a peer is a member, not which one: a second connection that claims an id while the
 * first is open replaces it, and the member says so (an identity problem naming both ends): as two peers claiming
 * the id if the first was heard from within a second, else as a dead link replaced. An honest member's old
 * connection is closed before it dials again, or silent since its link died.
 */
class TcpTransportMemberIdTest
{
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final ClusterSecret SECRET =
        ClusterSecret.of("the-member-secret-of-this-test".getBytes(StandardCharsets.US_ASCII));

    private final List<String> identityProblems = new ArrayList<>();
    private final List<TcpTransport> transports = new ArrayList<>();
    private long clockOffsetNs;
    private List<Member> members;
    private TcpTransport accepting;
    private TcpTransport first;

    @AfterEach
    void close()
    {
        transports.forEach(TcpTransport::close);
    }

    @Test
    void aSecondConnectionClaimingAnOpenMembersIdReplacesItAndIsNamed() throws IOException
    {
        memberZeroConnectedToMemberOne();
        assertTrue(identityProblems.isEmpty(), identityProblems.toString());

        clockOffsetNs += TimeUnit.MILLISECONDS.toNanos(250);
        final TcpTransport second = memberZeroOnAnotherPort();
        pumpUntil(() -> second.isConnected(1) && !replacements().isEmpty(), accepting, second);

        assertTrue(accepting.isConnected(0), "the newer connection is kept");
        assertEquals(1, replacements().size(), identityProblems.toString());
        final String problem = replacements().get(0);
        assertTrue(problem.contains("member 0 connected again from /127.0.0.1:"), problem);
        assertTrue(problem.contains("while its connection from /127.0.0.1:"), problem);
        final Matcher heard = Pattern.compile("last heard (\\d+) ms ago").matcher(problem);
        assertTrue(heard.find(), problem);
        assertTrue(Long.parseLong(heard.group(1)) >= 250, problem);
        assertTrue(problem.contains("two processes run as member 0, or another peer claims its id"), problem);
        pumpUntil(() -> !first.isConnected(1), first);
    }

    @Test
    void aConnectionSilentForLongerThanASecondIsNamedAsADeadLinkReplaced() throws IOException
    {
        memberZeroConnectedToMemberOne();

        // A link that died without a word (a host crashed, a cable cut): its member dials again from elsewhere.
        clockOffsetNs += TimeUnit.SECONDS.toNanos(2);
        final TcpTransport second = memberZeroOnAnotherPort();
        pumpUntil(() -> second.isConnected(1) && !replacements().isEmpty(), accepting, second);

        assertEquals(1, replacements().size(), identityProblems.toString());
        final String problem = replacements().get(0);
        assertTrue(problem.contains("taken as a dead link and replaced"), problem);
        assertFalse(problem.contains("two processes"), problem);
    }

    @Test
    void aMemberThatClosedItsConnectionReconnectsWithoutAProblem() throws IOException
    {
        memberZeroConnectedToMemberOne();

        first.close(); // a restart: the process's sockets close with it
        pumpUntil(() -> !accepting.isConnected(0), accepting);
        final TcpTransport restarted = member(0, members);
        pumpUntil(() -> accepting.isConnected(0) && restarted.isConnected(1), accepting, restarted);

        assertTrue(replacements().isEmpty(), identityProblems.toString());
    }

    private void memberZeroConnectedToMemberOne() throws IOException
    {
        members = List.of(new Member(0, "127.0.0.1", freePort(), true), new Member(1, "127.0.0.1", freePort(), true));
        accepting = member(1, members);
        first = member(0, members);
        pumpUntil(() -> accepting.isConnected(0) && first.isConnected(1), accepting, first);
    }

    /** A second process configured as member 0, on another port (the first holds member 0's), or an impostor. */
    private TcpTransport memberZeroOnAnotherPort() throws IOException
    {
        return member(0, List.of(new Member(0, "127.0.0.1", freePort(), true), members.get(1)));
    }

    private List<String> replacements()
    {
        // A kind of their own, so that a flood of unproved claims under "identity" cannot push them out.
        return identityProblems.stream().filter(p -> p.startsWith("member-replaced: ")).toList();
    }

    private TcpTransport member(final int id, final List<Member> members)
    {
        final TcpTransport transport = new TcpTransport(id, members, 1 << 20, 1 << 16, SECRET,
            ClientProtocolShapes.create()).problemListener(new ProblemListener()
            {
                public void onProblem(final String problem)
                {
                    onProblem("connection", problem);
                }

                public void onProblem(final String kind, final String problem)
                {
                    if ("identity".equals(kind) || "member-replaced".equals(kind))
                    {
                        identityProblems.add(kind + ": " + problem);
                    }
                }
            });
        transports.add(transport);
        return transport;
    }

    private void pumpUntil(final BooleanSupplier done, final TcpTransport... parties)
    {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!done.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                fail("not done within " + TimeUnit.NANOSECONDS.toSeconds(TIMEOUT_NS) + " s; identity problems: " +
                    identityProblems);
            }
            final long now = System.nanoTime() + clockOffsetNs;
            for (final TcpTransport t : parties)
            {
                t.poll(now, (endpoint, buffer, offset, length) -> { });
                t.flush(now);
            }
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
