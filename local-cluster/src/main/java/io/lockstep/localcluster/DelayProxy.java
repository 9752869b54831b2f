package io.lockstep.localcluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that delays every byte by a fixed time each way: a cross-zone link on one machine, in
 * user space (this machine has no {@code tc netem}). Bytes keep their order; each direction of each connection has
 * a reader and a writer thread. For tests and benchmarks only.
 */
public final class DelayProxy implements AutoCloseable
{
    private final ServerSocket server;
    private final int targetPort;
    private final long delayNs;
    private final List<Socket> sockets = new ArrayList<>();
    private volatile boolean closed;
    private final AtomicLong bytesCarried = new AtomicLong();

    /** Bytes read at a time, and when they may be written on. */
    private record Chunk(byte[] bytes, int length, long dueNs)
    {
    }

    /**
     * @param targetPort where connections go (loopback).
     * @param delayMs    added each way.
     */
    public DelayProxy(final int targetPort, final long delayMs) throws IOException
    {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        this.delayNs = TimeUnit.MILLISECONDS.toNanos(delayMs);
        final Thread acceptor = new Thread(this::accept, "delay-proxy-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * @return the port to dial instead of the target's.
     */
    public int port()
    {
        return server.getLocalPort();
    }

    private void accept()
    {
        while (!closed)
        {
            try
            {
                final Socket in = server.accept();
                final Socket out = new Socket();
                try
                {
                    out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2000);
                }
                catch (final IOException ex)
                {
                    // The target is down: close at once, so that the caller sees its connection fail and retries,
                    // as across a real link (left open, it would wait out a handshake timeout instead).
                    closeQuietly(in);
                    closeQuietly(out);
                    continue;
                }
                in.setTcpNoDelay(true);
                out.setTcpNoDelay(true);
                synchronized (sockets)
                {
                    sockets.add(in);
                    sockets.add(out);
                }
                pipe(in, out);
                pipe(out, in);
            }
            catch (final IOException ex)
            {
                if (closed)
                {
                    return;
                }
                // The target is down: the caller sees its connection refused and retries, as across a real link.
            }
        }
    }

    private void pipe(final Socket from, final Socket to) throws IOException
    {
        final LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        final InputStream input = from.getInputStream();
        final OutputStream output = to.getOutputStream();
        final Thread reader = new Thread(() ->
        {
            try
            {
                // One read buffer, and a copy the size of what was read: a fresh 64 KiB array per read made
                // gigabytes of garbage a second at 10k msg/s, and the collector's pauses in the benchmark's own JVM.
                final byte[] bytes = new byte[64 * 1024];
                while (true)
                {
                    final int n = input.read(bytes);
                    if (n < 0)
                    {
                        break;
                    }
                    bytesCarried.addAndGet(n);
                    queue.put(new Chunk(Arrays.copyOf(bytes, n), n, System.nanoTime() + delayNs));
                }
            }
            catch (final IOException | InterruptedException ignore)
            {
                // Closed.
            }
            queue.add(new Chunk(null, -1, System.nanoTime() + delayNs));
        }, "delay-proxy-read");
        final Thread writer = new Thread(() ->
        {
            try
            {
                while (true)
                {
                    final Chunk chunk = queue.take();
                    long wait;
                    while ((wait = chunk.dueNs() - System.nanoTime()) > 0)
                    {
                        LockSupport.parkNanos(wait);
                    }
                    if (chunk.length() < 0)
                    {
                        break;
                    }
                    output.write(chunk.bytes(), 0, chunk.length());
                    output.flush();
                }
            }
            catch (final IOException | InterruptedException ignore)
            {
                // Closed.
            }
            closeQuietly(to);
            closeQuietly(from);
        }, "delay-proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    /** @return bytes carried across, both ways, every connection, since it started. */
    public long bytesCarried()
    {
        return bytesCarried.get();
    }

    public void close()
    {
        closed = true;
        closeQuietly(server);
        synchronized (sockets)
        {
            sockets.forEach(DelayProxy::closeQuietly);
        }
    }

    private static void closeQuietly(final AutoCloseable c)
    {
        try
        {
            c.close();
        }
        catch (final Exception ignore)
        {
            // Already closed.
        }
    }
}
