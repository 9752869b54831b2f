package io.lockstep.benchmarks;

import io.lockstep.localcluster.DelayProxy;
import org.HdrHistogram.Histogram;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The least a commit across zones can take here: round trips through the same user-space delay proxy the members
 * use, to an echo that does nothing. A commit needs one such round trip (the leader to a follower and back); the
 * proxy's own threads and timers add to the configured delay, and this measures by how much.
 */
final class ZoneFloor
{
    private ZoneFloor()
    {
    }

    /** Measure and print, as a sentence and as a key=value line ({@code zone mode=floor}). */
    static void print(final long delayMs, final int size) throws Exception
    {
        final Histogram rtt = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final int roundTrips = (int)Math.max(200, 1000 / delayMs); // about two seconds at any delay
        try (ServerSocket server = new ServerSocket(0))
        {
            final Thread echo = new Thread(() -> echo(server, size), "zone-floor-echo");
            echo.setDaemon(true);
            echo.start();
            try (DelayProxy proxy = new DelayProxy(server.getLocalPort(), delayMs);
                Socket s = new Socket("127.0.0.1", proxy.port()))
            {
                s.setTcpNoDelay(true);
                final DataInputStream in = new DataInputStream(s.getInputStream());
                final DataOutputStream out = new DataOutputStream(s.getOutputStream());
                final byte[] b = new byte[size];
                for (int i = 0; i < roundTrips; i++)
                {
                    final long t0 = System.nanoTime();
                    out.write(b);
                    out.flush();
                    in.readFully(b);
                    if (i >= roundTrips / 10)
                    {
                        rtt.recordValue(System.nanoTime() - t0);
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "zone floor: a round trip through the delay proxy (%d ms each way), %d bytes: " +
            "p50 %d us, p99 %d us, max %d us: the least a commit across zones takes here%n", delayMs, size,
            rtt.getValueAtPercentile(50) / 1000, rtt.getValueAtPercentile(99) / 1000, rtt.getMaxValue() / 1000);
        System.out.printf(Locale.ROOT, "zone mode=floor delay_ms=%d size=%d rtt_p50_us=%d rtt_p99_us=%d " +
            "rtt_max_us=%d%n", delayMs, size, rtt.getValueAtPercentile(50) / 1000,
            rtt.getValueAtPercentile(99) / 1000, rtt.getMaxValue() / 1000);
    }

    /** Echo whatever one connection to the server sends, in messages of the size, until it closes. */
    static void echo(final ServerSocket server, final int size)
    {
        try (Socket s = server.accept())
        {
            s.setTcpNoDelay(true);
            final DataInputStream in = new DataInputStream(s.getInputStream());
            final DataOutputStream o = new DataOutputStream(s.getOutputStream());
            final byte[] b = new byte[size];
            while (true)
            {
                in.readFully(b);
                o.write(b);
                o.flush();
            }
        }
        catch (final Exception ignore)
        {
            // The client closed.
        }
    }
}
