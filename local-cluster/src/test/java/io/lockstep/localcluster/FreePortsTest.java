package io.lockstep.localcluster;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FreePortsTest
{
    @Test
    void portsAreDistinctBindableAndNeverOnesTheKernelGivesToOutgoingConnections() throws Exception
    {
        final Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        final int ephemeralLow = Files.isReadable(range) ?
            Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0]) : 32_768;
        final Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 50; i++)
        {
            final int port = FreePorts.next();
            assertTrue(port < ephemeralLow, port + " is in the ephemeral range, from " + ephemeralLow);
            try (ServerSocket socket = new ServerSocket(port))
            {
                assertEquals(port, socket.getLocalPort());
            }
            ports.add(port);
        }
        assertEquals(50, ports.size(), "no port handed out twice");
    }
}
