package io.lockstep.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * What one message hop costs on this machine's loopback, the way a member pays for it: the sender's {@code write}
 * (on loopback it also runs the receiver's TCP input in the sender's context), the receiver's wake from
 * {@code epoll_wait} and its {@code read}. Two threads play ping-pong with messages of the given size, each blocked
 * in its own NIO selector between messages; their CPU time (user plus system, from the JVM's thread accounting)
 * divided by the hops is the figure. A Lockstep echo costs the three members five such hops (two appends, two
 * acknowledgements, and the client's message in plus the echo out) and three log writes: that is the floor of
 * members' CPU per message when nothing is batched.
 */
final class TcpHopCost
{
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /**
     * @param hopNs     CPU nanoseconds per hop, both sides.
     * @param wakeShare share of the sender's CPU spent inside epoll_wait (going to sleep, being woken, scheduled
     *                  back in).
     */
    record Hop(double hopNs, double wakeShare)
    {
    }

    private TcpHopCost()
    {
    }

    /**
     * @return CPU per hop over the given round trips (after as many again not measured).
     */
    static Hop measure(final int size, final int roundTrips) throws Exception
    {
        final ThreadMXBean threads = THREADS;
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            final long[] echoCpu = new long[1];
            final Thread echo = new Thread(() ->
            {
                try (SocketChannel channel = server.accept())
                {
                    final long start = threads.getCurrentThreadCpuTime();
                    pingPong(channel, size, 2 * roundTrips, false, new long[1]);
                    echoCpu[0] = threads.getCurrentThreadCpuTime() - start;
                }
                catch (final IOException ex)
                {
                    throw new IllegalStateException(ex);
                }
            }, "hop-echo");
            echo.start();
            try (SocketChannel channel = SocketChannel.open(server.getLocalAddress()))
            {
                pingPong(channel, size, roundTrips, true, new long[1]); // warm-up; the echo's count includes it
                final long[] wakeCpuNs = new long[1];
                final long start = threads.getCurrentThreadCpuTime();
                pingPong(channel, size, roundTrips, true, wakeCpuNs);
                final long pingCpu = threads.getCurrentThreadCpuTime() - start;
                echo.join();
                // The echo thread's warm-up half is not measured apart; count its CPU over both halves as one.
                return new Hop((pingCpu + echoCpu[0] / 2.0) / (2.0 * roundTrips), (double)wakeCpuNs[0] / pingCpu);
            }
        }
    }

    /**
     * Send first (pinger) or answer (echo), each message read whole before the next is written; the pinger adds its
     * CPU inside epoll_wait to {@code wakeCpuNs[0]}.
     */
    private static void pingPong(
        final SocketChannel channel, final int size, final int count, final boolean sendsFirst, final long[] wakeCpuNs)
        throws IOException
    {
        final boolean measureWake = sendsFirst;
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        try (Selector selector = Selector.open())
        {
            channel.register(selector, SelectionKey.OP_READ);
            for (int i = 0; i < count; i++)
            {
                if (sendsFirst)
                {
                    write(channel, buffer);
                }
                buffer.clear();
                while (buffer.hasRemaining())
                {
                    final long before = measureWake ? THREADS.getCurrentThreadCpuTime() : 0;
                    selector.select(key -> { }); // as a member idles: wait in epoll, then read what woke it
                    wakeCpuNs[0] += measureWake ? THREADS.getCurrentThreadCpuTime() - before : 0;
                    if (channel.read(buffer) < 0)
                    {
                        throw new IOException("peer closed");
                    }
                }
                if (!sendsFirst)
                {
                    write(channel, buffer);
                }
            }
        }
    }

    private static void write(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        buffer.clear();
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    /**
     * @return CPU nanoseconds of one {@code write} of the given size to a file (page cache only), as a log append
     * under durability none costs.
     */
    static double fileWriteNs(final int size, final int writes) throws IOException
    {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final Path file = Files.createTempFile("lockstep-hop", ".log");
        try (FileChannel channel = FileChannel.open(file,
            StandardOpenOption.WRITE))
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
            long start = 0;
            for (int i = 0; i < 2 * writes; i++)
            {
                if (i == writes)
                {
                    start = threads.getCurrentThreadCpuTime();
                }
                buffer.clear();
                channel.write(buffer, (long)(i % 65536) * size);
            }
            return (threads.getCurrentThreadCpuTime() - start) / (double)writes;
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    /**
     * @return the key=value line: CPU per hop and per file write, and the members' floor per unbatched message.
     */
    static String summary(final int size, final Hop hop, final double fileWriteNs)
    {
        return String.format(Locale.ROOT, "machine mode=hop size=%d cpu_us_per_hop=%.1f cpu_us_per_file_write=%.1f " +
            "wake_share_pct=%.0f members_floor_cpu_us_per_msg=%.1f", size, hop.hopNs() / 1000, fileWriteNs / 1000,
            100 * hop.wakeShare(), (5 * hop.hopNs() + 3 * fileWriteNs) / 1000);
    }
}
