package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The latency floor of the transport itself: an echo server that does nothing but echo, over loopback TCP, driven
 * open-loop at a fixed rate by a client paced like the cluster benchmarks' ({@link SendPacer}), latency measured from
 * each message's intended send time. Both sides wait in an NIO selector between messages, as members do. What this
 * shows at a rate, no system built on this machine's TCP can beat there; a cluster message crosses loopback four
 * times (client to leader, leader to a follower and back, leader to client), this echo twice.
 */
final class LoopbackEcho
{
    private LoopbackEcho()
    {
    }

    /**
     * Round trips from each message's intended send time, and how late the client itself sent (ns): the client is a
     * thread on the same two cores, and when it is late every message behind it counts that too.
     */
    static final class Result
    {
        final Histogram roundTrip = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final Histogram sendLate = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    }

    /**
     * @return the round trips and send lateness at the given rate over the given time, after a second not measured.
     */
    static Result run(final int rate, final int size, final int seconds) throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            final Thread echo = new Thread(() -> echo(server, size), "loopback-echo");
            echo.setDaemon(true);
            echo.start();
            return drive((InetSocketAddress)server.getLocalAddress(), (byte)0, rate, size, seconds, () -> { });
        }
    }

    /**
     * The paced open-loop client: connect, send {@code hello} if not 0, then messages of the given size at the rate,
     * each carrying its intended send time, and time each one that comes back whole.
     *
     * @param onMeasureStart run once when the measured window starts (after the first second).
     * @return the round trips and send lateness over the measured window.
     */
    static Result drive(final InetSocketAddress address, final byte hello, final int rate, final int size,
        final int seconds, final Runnable onMeasureStart) throws IOException
    {
        final Result result = new Result();
        final Histogram histogram = result.roundTrip;
        try (SocketChannel channel = SocketChannel.open(address); Selector selector = Selector.open())
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (0 != hello)
            {
                final ByteBuffer role = ByteBuffer.allocate(1).put(0, hello);
                while (role.hasRemaining())
                {
                    channel.write(role);
                }
            }
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ);
            final SocketClient client = new SocketClient(channel, selector, size, result.roundTrip);
            final long interval = TimeUnit.SECONDS.toNanos(1) / rate;
            final long start = System.nanoTime();
            final long measureFrom = start + TimeUnit.SECONDS.toNanos(1);
            final long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
            // Only echoes of messages due in the window are timed. The warm-up already skips some (those of its first
            // half second), so that the compiled read path has seen both ways of that branch.
            client.timeFrom = start + TimeUnit.MILLISECONDS.toNanos(500);
            final long warmedUpTo =
                SendPacer.pace(client, client.message, size, start, interval, 0, measureFrom, result.sendLate);
            client.timeFrom = measureFrom;
            histogram.reset();
            result.sendLate.reset();
            onMeasureStart.run();
            SendPacer.pace(client, client.message, size, start, interval, warmedUpTo, end, result.sendLate);
        }
        catch (final UncheckedIOException ex)
        {
            throw ex.getCause();
        }
        return result;
    }

    /**
     * The paced client over one socket: what is offered is sent on the next poll, in one write, as Lockstep's client
     * sends; times each echo that comes back whole from the intended send time it carries. A socket that takes no
     * more (the server not reading) is never waited on: what it did not take stays for the next poll, which also reads
     * the echoes, and an offer that does not fit is refused (back pressure), so neither side can end up writing to
     * the other forever with neither reading.
     */
    static final class SocketClient implements SendPacer.Client
    {
        private final SocketChannel channel;
        private final Selector selector;
        private final int size;
        private final Histogram roundTrip;
        private final ByteBuffer pending;
        private final ByteBuffer in;
        final UnsafeBuffer message;
        /** Echoes of messages due before this are not timed. */
        long timeFrom;

        SocketClient(final SocketChannel channel, final Selector selector, final int size, final Histogram roundTrip)
        {
            this.channel = channel;
            this.selector = selector;
            this.size = size;
            this.roundTrip = roundTrip;
            this.pending = ByteBuffer.allocateDirect(SendPacer.MAX_BURST * size);
            // The send time is put by the pacer through an UnsafeBuffer, in native order.
            this.in = ByteBuffer.allocateDirect(64 * size).order(ByteOrder.nativeOrder());
            this.message = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
        }

        public boolean offer(final UnsafeBuffer m, final int length)
        {
            if (length > pending.capacity())
            {
                throw new IllegalArgumentException("message of " + length + " bytes, more than the send buffer's " +
                    pending.capacity());
            }
            if (pending.remaining() < length)
            {
                send();
                if (pending.remaining() < length)
                {
                    return false;
                }
            }
            m.getBytes(0, pending, pending.position(), length);
            pending.position(pending.position() + length);
            return true;
        }

        /**
         * Write what was offered, as much as the socket takes now; the rest stays, in order, for the next call.
         *
         * @return 1 if any bytes went, else 0.
         */
        private int send()
        {
            if (0 == pending.position())
            {
                return 0;
            }
            pending.flip();
            int written = 0;
            try
            {
                for (int n; pending.hasRemaining() && (n = channel.write(pending)) > 0; )
                {
                    written += n;
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            pending.compact();
            return written > 0 ? 1 : 0;
        }

        public int poll()
        {
            final int sent = send();
            try
            {
                if (0 == selector.selectNow())
                {
                    return sent;
                }
                selector.selectedKeys().clear();
                if (channel.read(in) < 0)
                {
                    throw new IOException("the echo closed the connection");
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            int offset = 0;
            while (in.position() - offset >= size)
            {
                final long due = in.getLong(offset);
                if (due >= timeFrom)
                {
                    roundTrip.recordValue(System.nanoTime() - due);
                }
                offset += size;
            }
            in.limit(in.position()).position(offset);
            in.compact();
            return 1;
        }
    }

    private static void echo(final ServerSocketChannel server, final int size)
    {
        try (SocketChannel channel = server.accept(); Selector selector = Selector.open())
        {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.register(selector, SelectionKey.OP_READ);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(64 * size);
            while (true)
            {
                selector.select(key -> { });
                if (channel.read(buffer) < 0)
                {
                    return;
                }
                buffer.flip();
                while (buffer.hasRemaining())
                {
                    channel.write(buffer);
                }
                buffer.clear();
            }
        }
        catch (final IOException ex)
        {
            // The client closed: done.
        }
    }

    static String summary(final int rate, final int size, final Result r)
    {
        final Histogram h = r.roundTrip;
        return String.format(Locale.ROOT, "loopback mode=echo rate=%d size=%d p50_us=%d p99_us=%d p999_us=%d " +
            "max_us=%d send_late_p99_us=%d", rate, size, h.getValueAtPercentile(50) / 1000,
            h.getValueAtPercentile(99) / 1000, h.getValueAtPercentile(99.9) / 1000, h.getMaxValue() / 1000,
            r.sendLate.getValueAtPercentile(99) / 1000);
    }
}
