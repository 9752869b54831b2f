package io.lockstep.consensus.node;

import java.util.Properties;

/**
 * Where a member serves its metrics, health and readiness, and how long one request may take.
 * <pre>
 * lockstep.metrics.port        serve /metrics, /health and /ready over HTTP on this port; 0 or absent: off
 * lockstep.metrics.address     the address to listen on (default 127.0.0.1: this host only; give the address of a
 *                              management network for a Prometheus elsewhere, or 0.0.0.0 for every interface)
 * lockstep.metrics.timeout.ms  a request, or a response, taking longer than this is dropped (default 5000): a client
 *                              that connects and sends nothing cannot hold the server's one thread
 * </pre>
 *
 * @param port      0 for off.
 * @param address   the listen address.
 * @param timeoutMs bound on reading a request and on writing a response.
 */
public record MetricsSettings(int port, String address, int timeoutMs)
{
    public static final String PORT = "lockstep.metrics.port";
    public static final String ADDRESS = "lockstep.metrics.address";
    public static final String TIMEOUT_MS = "lockstep.metrics.timeout.ms";

    static MetricsSettings parse(final String source, final Properties p) throws NodeConfig.ConfigException
    {
        final int port = NodeConfig.intValue(source, p, PORT, 0);
        if (port < 0 || port > 65535)
        {
            throw new NodeConfig.ConfigException(source + ": " + PORT + " must be a port in [1, 65535], or 0 for " +
                "off, not " + port);
        }
        final int timeoutMs = NodeConfig.intValue(source, p, TIMEOUT_MS, 5000);
        if (timeoutMs < 100 || timeoutMs > 600_000)
        {
            throw new NodeConfig.ConfigException(source + ": " + TIMEOUT_MS + " must be in [100, 600000], not " +
                timeoutMs);
        }
        final String address = p.getProperty(ADDRESS, "127.0.0.1").trim();
        if (address.isEmpty())
        {
            throw new NodeConfig.ConfigException(source + ": " + ADDRESS + " is empty: give an address, or " +
                "0.0.0.0 for every interface");
        }
        return new MetricsSettings(port, address, timeoutMs);
    }
}
