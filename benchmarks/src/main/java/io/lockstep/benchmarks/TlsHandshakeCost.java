package io.lockstep.benchmarks;

import io.lockstep.cluster.transport.ClientProtocolShapes;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.DevCertificates;
import io.lockstep.cluster.transport.LinkClass;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.cluster.transport.TlsFiles;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What one TLS handshake costs the member that accepts it, on the member's own thread (the thread that also runs
 * consensus): a member transport polls on a thread of its own while clients connect over TLS one after another,
 * and the CPU time of the member thread's polls that did work is divided by the connections it completed. Also the same
 * for connections in the clear, for comparison. {@code TlsHandshakeCost [--connections 500]}
 */
public final class TlsHandshakeCost
{
    private TlsHandshakeCost()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final int connections = args.length == 2 && "--connections".equals(args[0]) ? Integer.parseInt(args[1]) : 500;
        final Path dir = Files.createTempDirectory("lockstep-tls-cost");
        try
        {
            DevCertificates.write(dir, List.of("127.0.0.1"));
            final TlsFiles memberFiles = TlsFiles.load(dir.resolve(DevCertificates.CERTIFICATE),
                dir.resolve(DevCertificates.KEY), dir.resolve(DevCertificates.AUTHORITY));
            final TlsFiles clientFiles = TlsFiles.trusting(dir.resolve(DevCertificates.AUTHORITY));
            for (final boolean tls : new boolean[]{ false, true, false, true })
            {
                measure(tls, connections, memberFiles, clientFiles);
            }
        }
        finally
        {
            TempDirs.deleteTree(dir);
        }
    }

    private static void measure(final boolean tls, final int connections, final TlsFiles memberFiles,
        final TlsFiles clientFiles) throws Exception
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        final List<Member> members = List.of(new Member(0, "127.0.0.1", port, true));
        final TcpTransport member = new TcpTransport(0, members, 1 << 20, 1 << 16, ClusterSecret.of(
            "a-member-secret-for-the-benchmark".getBytes(StandardCharsets.US_ASCII)), ClientProtocolShapes.create())
            .tls(memberFiles, tls ? EnumSet.of(LinkClass.CLIENTS) : EnumSet.noneOf(LinkClass.class));
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final AtomicBoolean running = new AtomicBoolean(true);
        final long[] cpuNs = new long[1];
        final Thread memberThread = new Thread(() ->
        {
            // Only the polls that did something count: the thread spins between connections.
            while (running.get())
            {
                final long before = threads.getCurrentThreadCpuTime();
                final long now = System.nanoTime();
                final int work = member.poll(now, (endpoint, buffer, offset, length) -> { }) + member.flush(now);
                if (work > 0)
                {
                    cpuNs[0] += threads.getCurrentThreadCpuTime() - before;
                }
            }
        }, "member");
        memberThread.start();
        final long wallStart = System.nanoTime();
        for (int i = 0; i < connections; i++)
        {
            final TcpTransport client = new TcpTransport(-1, members, 1 << 16);
            if (tls)
            {
                client.tls(clientFiles, EnumSet.of(LinkClass.CLIENTS));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // Connected once the member has the client registered, which is after its Hello came through the link.
            while (member.clientConnections() < 1 && System.nanoTime() < deadline)
            {
                final long now = System.nanoTime();
                client.poll(now, (endpoint, buffer, offset, length) -> { });
                client.flush(now);
            }
            if (member.clientConnections() < 1)
            {
                throw new IllegalStateException("connection " + i + " did not complete");
            }
            client.close();
            while (member.clientConnections() > 0 && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
        }
        final long wallNs = System.nanoTime() - wallStart;
        running.set(false);
        memberThread.join();
        member.close();
        System.out.printf(Locale.ROOT, "handshake mode=%s connections=%d member_thread_cpu_us_per_connection=%.0f " +
            "wall_us_per_connection=%.0f%n", tls ? "tls" : "clear", connections,
            cpuNs[0] / 1000.0 / connections, wallNs / 1000.0 / connections);
    }
}
