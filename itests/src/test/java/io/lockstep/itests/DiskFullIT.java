package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.lockstep.itests.ClusterProbes.caughtUp;
import static io.lockstep.itests.ClusterProbes.gated;
import static io.lockstep.itests.ClusterProbes.leader;
import static io.lockstep.itests.ClusterProbes.makeLeader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A full disk under a leader, as processes: member 0's data directory is a 48 MiB tmpfs of its own, made for the
 * test (so the test runs as root, as CI does, and says so otherwise rather than skip). Member 0 leads under a
 * client's load; a file then fills its filesystem. It must stop acknowledging, hand leadership over, say why (error
 * log, metric, readiness), stay up, and once the file is deleted write again and catch up by itself; the client
 * loses nothing and gets nothing twice.
 */
class DiskFullIT
{
    private static final String ECHO = "io.lockstep.examples.EchoService";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aLeaderWhoseDiskFillsHandsOverLosesNothingAndResumesWhenSpaceReturns() throws Exception
    {
        assertEquals("0", run("id", "-u").trim(), "this test mounts a small tmpfs for one member's data: run it " +
            "as root (CI does)");
        try (LocalCluster cluster = new LocalCluster(dir, 3, "batch", 1 << 20, ECHO))
        {
            final int[] metricsPorts = cluster.enableMetrics();
            final Path data = cluster.dataDir(0);
            Files.createDirectories(data);
            assertEquals("", run("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", data.toString()).trim());
            try
            {
                fillAndEmptyUnderLoad(cluster, metricsPorts[0], data);
            }
            catch (final AssertionError | IOException ex)
            {
                throw new AssertionError(ex + "\n---- member 0:\n" + cluster.output(0), ex);
            }
            finally
            {
                // Lazily: the members, stopped when the cluster closes, may still hold files there.
                run("umount", "-l", data.toString());
            }
        }
    }

    private void fillAndEmptyUnderLoad(final LocalCluster cluster, final int metricsPort, final Path data)
        throws Exception
    {
        for (int i = 0; i < 3; i++)
        {
            cluster.start(i);
        }
        final EchoWorkload load = new EchoWorkload(200);
        try (AdminClient admin = cluster.adminClient();
            ClusterClient client = ClusterClient.connect(cluster.members(), load))
        {
            makeLeader(admin, client, load, 0);
            load.runFor(1000);

            final Path filler = data.resolve("filler");
            final long filled = fill(filler);
            assertTrue(load.runUntil(gated(() -> leader(admin) > 0), 20_000),
                "member 0, its disk full, handed leadership over");
            final long sentWhileFull = load.sent();
            load.runFor(2000);
            load.finishAndCheck(20_000, "member 0's disk full (" + filled + " bytes of filler)");
            assertTrue(load.sent() > sentWhileFull, "the client carried on");

            final HttpResponse<String> ready = get(metricsPort, "/ready");
            assertEquals(503, ready.statusCode(), ready.body());
            assertTrue(ready.body().contains("cannot write its log"), ready.body());
            assertTrue(get(metricsPort, "/metrics").body().contains("lockstep_log_write_blocked{member=\"0\"} 1"));
            final AdminClient.Errors errors = admin.errors(2000).get(0);
            assertTrue(null != errors && errors.recent().stream().map(MemberErrors.Entry::kind)
                .anyMatch("disk"::equals), "tool errors names the disk: " + errors);

            Files.delete(filler);
            assertTrue(load.runUntil(gated(() -> caughtUp(admin, 0, true)), 30_000),
                "member 0 writes again and catches up");
            assertTrue(get(metricsPort, "/metrics").body().contains("lockstep_log_write_blocked{member=\"0\"} 0"));
            load.runFor(1000);
            load.finishAndCheck(20_000, "after space returned");
            assertTrue(cluster.awaitExit(0, 1) < 0, "member 0 stayed up throughout");
        }
    }

    /** Write zeros until the filesystem refuses. */
    private static long fill(final Path filler) throws IOException
    {
        final byte[] chunk = new byte[64 * 1024];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(filler))
        {
            while (true)
            {
                out.write(chunk);
                written += chunk.length;
            }
        }
        catch (final IOException ex)
        {
            assertTrue(ex.getMessage().contains("No space left on device"), ex.toString());
        }
        return written;
    }

    private HttpResponse<String> get(final int port, final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String run(final String... command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", command));
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
        return out;
    }
}
