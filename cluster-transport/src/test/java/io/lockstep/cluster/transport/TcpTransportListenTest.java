package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A member that cannot listen (its port taken) says where, and leaves no selector or channel open: a process that
 * retries its start, or a rehearsal that lost its port, does not leak a file descriptor per try.
 */
class TcpTransportListenTest
{
    @Test
    void aTakenPortIsNamedAndLeavesNothingOpen() throws Exception
    {
        final File fds = new File("/proc/self/fd");
        assumeTrue(fds.isDirectory(), "counts open files through /proc (Linux)");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            final List<Member> members = List.of(new Member(0, "127.0.0.1", taken.getLocalPort(), true));
            // Warm up whatever the JDK opens once (its epoll machinery's own files), then count.
            assertThrows(IllegalStateException.class, () -> new TcpTransport(0, members, 64 * 1024));
            final int before = fds.list().length;
            for (int i = 0; i < 50; i++)
            {
                final IllegalStateException refused =
                    assertThrows(IllegalStateException.class, () -> new TcpTransport(0, members, 64 * 1024));
                assertTrue(refused.getMessage().startsWith("cannot listen on"), refused.getMessage());
            }
            final int after = fds.list().length;
            assertTrue(after - before < 10, "open files grew from " + before + " to " + after + " over 50 tries");
        }
    }
}
