package io.lockstep.localcluster;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * TCP ports for processes a test starts, found free now and bound by someone else later.
 * <p>
 * Why not {@code new ServerSocket(0)}: the kernel hands out those ports from its ephemeral range, the same range it
 * takes the local port of every outgoing connection from. Between finding such a port and a member binding it, a
 * connection made by anything on the machine (a member dialling a peer, a client, Docker) can be given that very
 * port, and the member then fails to start with "Address already in use": seen in CI, a metrics port taken that
 * way. A port below the ephemeral range is never given to an outgoing connection, so only another listener could
 * take it, and ports are handed out in turn, never twice by one JVM.
 */
public final class FreePorts
{
    /** Lowest port handed out: above the registered services most machines run. */
    private static final int LOWEST = 10_000;
    /** Where this JVM starts: spread by process id, so two JVMs running tests at once do not walk the same ports. */
    private static final AtomicInteger NEXT = new AtomicInteger((int)(ProcessHandle.current().pid() * 7919 % 10_007));
    private static final int[] RANGE = range();

    private FreePorts()
    {
    }

    /**
     * @return a port on which nothing listens now, below the kernel's ephemeral range (or an ephemeral one where the
     * machine leaves no room below it).
     * @throws IOException if no port is free.
     */
    public static int next() throws IOException
    {
        final int from = RANGE[0];
        final int size = RANGE[1] - from;
        if (size <= 0)
        {
            try (ServerSocket socket = new ServerSocket(0))
            {
                return socket.getLocalPort();
            }
        }
        for (int attempt = 0; attempt < size; attempt++)
        {
            final int port = from + Math.floorMod(NEXT.getAndIncrement(), size);
            if (isFree(port))
            {
                return port;
            }
        }
        throw new IOException("no free port in [" + from + ", " + RANGE[1] + ")");
    }

    @SuppressWarnings("try") // binding is the test; the socket is not used
    private static boolean isFree(final int port)
    {
        // The wildcard address: a listener on any address of the port, loopback included, makes this bind fail.
        try (ServerSocket socket = new ServerSocket(port))
        {
            return true;
        }
        catch (final IOException taken)
        {
            return false;
        }
    }

    /**
     * [first, end): the ports below the kernel's ephemeral range.
     */
    private static int[] range()
    {
        int ephemeralLow = 32_768;
        try
        {
            // One read with a large buffer: this sysctl answers only a read from offset 0, so a reader that takes a
            // byte first (Files.readString on a file reporting size 0) sees "3" and then the end.
            final String text = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
            ephemeralLow = Integer.parseInt(text.split("\\s+")[0]);
        }
        catch (final IOException | RuntimeException ignore)
        {
            // Not Linux, or not readable: the Linux default.
        }
        return new int[] { LOWEST, Math.max(LOWEST, ephemeralLow) };
    }
}
