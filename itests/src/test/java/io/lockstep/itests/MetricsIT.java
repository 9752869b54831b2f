package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three member processes serving {@code /metrics}, {@code /health} and {@code /ready}: every member becomes ready,
 * positions and counters move under load, and after the leader is killed the survivors' metrics show the new
 * leader, a higher term and an election won.
 */
class MetricsIT
{
    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void metricsHealthAndReadinessFollowLoadAndFailover() throws Exception
    {
        try (LocalCluster members = new LocalCluster(dir, 3, "batch", 1 << 20, "io.lockstep.examples.EchoService");
            AdminClient client = members.adminClient())
        {
            final int[] ports = members.enableMetrics();
            for (int i = 0; i < 3; i++)
            {
                members.start(i);
            }
            for (int i = 0; i < 3; i++)
            {
                final int member = i;
                awaitStatus(ports[member], "/ready", 200, "member " + member + " ready");
                assertEquals(200, get(ports[member], "/health").statusCode());
            }
            final String text = get(ports[0], "/metrics").body();
            assertTrue(text.contains("# TYPE lockstep_term gauge\n"), text);
            assertTrue(text.contains("# TYPE lockstep_elections_started_total counter\n"), text);
            assertTrue(text.contains("lockstep_commit_position{member=\"0\"} "), text);

            final int leader = client.awaitLeader(20_000);
            final Map<String, Long> before = scrape(ports[leader]);
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[288]);
            for (int n = 0; n < 300; n++)
            {
                payload.putLong(0, n);
                assertTrue(client.append(payload, 0, payload.capacity(), 5000) > 0, "append " + n);
            }
            final Map<String, Long> after = scrape(ports[leader]);
            assertEquals(2, after.get("lockstep_role"), "the leader says it leads");
            assertEquals(leader, after.get("lockstep_leader_id"));
            assertTrue(after.get("lockstep_client_appends_total") - before.get("lockstep_client_appends_total") >= 300);
            assertTrue(after.get("lockstep_commit_position") >= before.get("lockstep_commit_position") + 300 * 320);
            assertTrue(after.get("lockstep_log_flush_seconds_count") >= before.get("lockstep_log_flush_seconds_count") +
                1, "durability batch: the leader's flushes are timed");
            assertTrue(after.get("lockstep_log_retained_bytes") >= 300 * 320, after.toString());
            assertTrue(after.get("lockstep_follower_lag_ns") >= 0
                && after.containsKey("lockstep_malformed_messages_total"),
                after.toString());
            try (ClusterClient echo = ClusterClient.connect(members.members(), (s, q, b, o, l) -> { }))
            {
                assertTrue(echo.awaitConnected(10_000));
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                long last = -1;
                for (int n = 0; n < 100; n++)
                {
                    while ((last = echo.offer(payload, 0, 100)) < 0)
                    {
                        echo.poll();
                    }
                }
                while (echo.acknowledgedSequence() < last)
                {
                    assertTrue(System.nanoTime() < deadline, "echoes acknowledged within 10 s");
                    echo.poll();
                }
            }
            final Map<String, Long> echoed = scrape(ports[leader]);
            assertTrue(echoed.get("lockstep_ingress_messages_total") - after.get("lockstep_ingress_messages_total") >=
                100, echoed.toString());
            assertTrue(echoed.get("lockstep_ingress_bytes_total") - after.get("lockstep_ingress_bytes_total") >=
                100 * 100, echoed.toString());
            assertTrue(echoed.get("lockstep_egress_messages_total") - after.get("lockstep_egress_messages_total") >=
                100, "the echo service answers each: " + echoed);
            for (int i = 0; i < 3; i++)
            {
                if (i != leader)
                {
                    final int follower = i;
                    awaitMetric(ports[follower], "lockstep_applied_position",
                        v -> v >= after.get("lockstep_commit_position"), "follower " + follower + " applies it all");
                    final Map<String, Long> f = scrape(ports[follower]);
                    assertEquals(0, f.get("lockstep_role"));
                    assertEquals(leader, f.get("lockstep_leader_id"));
                    assertTrue(f.get("lockstep_log_bytes_replicated_in_total") >= 300 * 320, f.toString());
                }
            }

            final long oldTerm = after.get("lockstep_term");
            members.kill(leader);
            final int survivor = (leader + 1) % 3;
            final int other = (leader + 2) % 3;
            awaitMetric(ports[survivor], "lockstep_term", t -> t > oldTerm, "a new term after the leader died");
            awaitMetric(ports[survivor], "lockstep_leader_id", id -> id == survivor || id == other,
                "a new leader among the survivors");
            final long newLeader = scrape(ports[survivor]).get("lockstep_leader_id");
            final Map<String, Long> won = scrape(ports[(int)newLeader]);
            assertEquals(2, won.get("lockstep_role"));
            assertTrue(won.get("lockstep_leaderships_won_total") >= 1, won.toString());
            awaitStatus(ports[survivor], "/ready", 200, "survivor ready under the new leader");
            awaitStatus(ports[other], "/ready", 200, "other survivor ready under the new leader");
        }
    }

    private Map<String, Long> scrape(final int port) throws Exception
    {
        final Map<String, Long> values = new HashMap<>();
        for (final String line : get(port, "/metrics").body().split("\n"))
        {
            if (line.startsWith("lockstep_"))
            {
                // Histogram sums are fractional seconds; everything else is a whole number.
                values.put(line.substring(0, line.indexOf('{')),
                    (long)Double.parseDouble(line.substring(line.indexOf("} ") + 2)));
            }
        }
        return values;
    }

    private HttpResponse<String> get(final int port, final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private void awaitStatus(final int port, final String path, final int status, final String what) throws Exception
    {
        final Integer last = await(() -> get(port, path).statusCode(), code -> code == status);
        if (null != last)
        {
            throw new AssertionError(what + ": " + path + " answered " + last + " for 20 s");
        }
    }

    private void awaitMetric(final int port, final String name, final Predicate<Long> condition, final String what)
        throws Exception
    {
        final Long last = await(() -> scrape(port).get(name), value -> null != value && condition.test(value));
        if (null != last)
        {
            throw new AssertionError(what + ": " + name + " was " + last + " for 20 s");
        }
    }

    @FunctionalInterface
    private interface Probe<T>
    {
        T read() throws Exception;
    }

    /**
     * Probe until the condition holds, for at most 20 s, 20 ms apart (each probe is an HTTP request).
     *
     * @return null once the condition held; else the last value read.
     */
    private static <T> T await(final Probe<T> probe, final Predicate<T> condition) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        T last = null;
        while (System.nanoTime() < deadline)
        {
            last = probe.read();
            if (condition.test(last))
            {
                return null;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return last;
    }
}
