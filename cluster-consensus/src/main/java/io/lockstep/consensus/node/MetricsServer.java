package io.lockstep.consensus.node;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lockstep.consensus.MemberMetrics;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * A member's metrics over HTTP, on the JDK's built-in server and a thread of its own, never the member's:
 * <ul>
 *   <li>{@code /metrics}: every {@link MemberMetrics} value in Prometheus text format (version 0.0.4), each named
 *   {@code lockstep_<name>} with a {@code member} label;</li>
 *   <li>{@code /health}: 200 while the process and its member thread are alive (a liveness probe);</li>
 *   <li>{@code /ready}: 200 when the member knows a leader, has applied everything it knows is committed (within
 *   one batch), and owes no lost log frames; 503 with the reason otherwise (a readiness probe: take traffic here, or
 *   count this member as whole).</li>
 * </ul>
 * Reading the values costs the member nothing: they are release-stored by its thread and read here.
 */
final class MetricsServer implements AutoCloseable
{
    /** Applied within this much of commit counts as caught up: about one write batch. */
    static final long READY_APPLIED_LAG_BYTES = 1024 * 1024;

    private final HttpServer server;
    private final ExecutorService executor;

    /**
     * @param settings where to listen, and the bound on each request and response.
     * @param memberId this member's id, as a label.
     * @param metrics the member's values.
     * @param alive   tells whether the member thread still runs.
     * @param refresh brings the values kept outside the member thread up to date, before each scrape.
     */
    MetricsServer(final MetricsSettings settings, final int memberId, final MemberMetrics metrics,
        final BooleanSupplier alive, final Runnable refresh) throws IOException
    {
        boundRequestTimes(settings.timeoutMs());
        server = HttpServer.create(new InetSocketAddress(settings.address(), settings.port()), 16);
        executor = Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "lockstep-metrics");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", exchange ->
        {
            refresh.run();
            respond(exchange, 200, render(memberId, metrics), "text/plain; version=0.0.4; charset=utf-8");
        });
        server.createContext("/health", exchange ->
        {
            final boolean live = alive.getAsBoolean();
            respond(exchange, live ? 200 : 503, live ? "live\n" : "member thread stopped\n", "text/plain");
        });
        server.createContext("/ready", exchange ->
        {
            final String notReady = alive.getAsBoolean() ? notReadyReason(metrics) : "member thread stopped";
            respond(exchange, null == notReady ? 200 : 503, null == notReady ? "ready\n" : notReady + "\n",
                "text/plain");
        });
        server.start();
    }

    /**
     * @return the port actually bound (useful when 0 asked for any free one).
     */
    int port()
    {
        return server.getAddress().getPort();
    }

    /**
     * The JDK's server reads its request and response time limits (whole seconds, so the timeout is rounded up)
     * from system properties, once, when its first server is made: set here unless the operator set them, before
     * that happens. They are the JVM's: an application embedding a member shares them.
     */
    private static void boundRequestTimes(final int timeoutMs)
    {
        final String seconds = Long.toString(Math.max(1, (timeoutMs + 999) / 1000));
        for (final String key : new String[]{ "sun.net.httpserver.maxReqTime", "sun.net.httpserver.maxRspTime" })
        {
            if (null == System.getProperty(key))
            {
                System.setProperty(key, seconds);
            }
        }
    }

    /**
     * @return why the member is not ready, or null if it is.
     */
    static String notReadyReason(final MemberMetrics metrics)
    {
        if (metrics.get(MemberMetrics.LEADER_ID) < 0)
        {
            return "no leader known";
        }
        if (1 == metrics.get(MemberMetrics.OWES_LOST_FRAMES))
        {
            return "owes log frames lost to disk damage";
        }
        if (1 == metrics.get(MemberMetrics.LOG_WRITE_BLOCKED))
        {
            return "cannot write its log: no space left on its device";
        }
        final long lag = metrics.get(MemberMetrics.COMMIT_POSITION) - metrics.get(MemberMetrics.APPLIED_POSITION);
        if (lag > READY_APPLIED_LAG_BYTES)
        {
            return "applying: " + lag + " committed bytes behind";
        }
        return null;
    }

    /**
     * @return every metric in Prometheus text format.
     */
    static String render(final int memberId, final MemberMetrics metrics)
    {
        final StringBuilder out = new StringBuilder(4096);
        for (int i = 0; i < MemberMetrics.count(); i++)
        {
            final String name = "lockstep_" + MemberMetrics.name(i);
            out.append("# HELP ").append(name).append(' ').append(MemberMetrics.help(i)).append('\n')
                .append("# TYPE ").append(name).append(' ').append(MemberMetrics.isCounter(i) ? "counter" : "gauge")
                .append('\n')
                .append(name).append("{member=\"").append(memberId).append("\"} ").append(metrics.get(i)).append('\n');
        }
        final String flush = "lockstep_log_flush_seconds";
        out.append("# HELP ").append(flush).append(" Log syncs (durability batch), as the member saw them end\n")
            .append("# TYPE ").append(flush).append(" histogram\n");
        long cumulative = 0;
        for (int b = 0; b <= MemberMetrics.flushBucketCount(); b++)
        {
            cumulative += metrics.flushesIn(b);
            final String le = b < MemberMetrics.flushBucketCount() ?
                Double.toString(MemberMetrics.flushBucketBoundNs(b) / 1e9) : "+Inf";
            out.append(flush).append("_bucket{member=\"").append(memberId).append("\",le=\"").append(le)
                .append("\"} ").append(cumulative).append('\n');
        }
        out.append(flush).append("_sum{member=\"").append(memberId).append("\"} ")
            .append(metrics.flushNanosTotal() / 1e9).append('\n')
            .append(flush).append("_count{member=\"").append(memberId).append("\"} ").append(metrics.flushCount())
            .append('\n');
        return out.toString();
    }

    private static void respond(final HttpExchange exchange, final int status, final String body,
        final String contentType) throws IOException
    {
        final byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream os = exchange.getResponseBody())
        {
            os.write(bytes);
        }
    }

    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
