package io.lockstep.itests;

import org.junit.jupiter.api.Test;

import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seconds-long run of {@code bin/lockstep bench compare}, so the benchmarks cannot rot: both systems must start,
 * carry the offered rate, and print their result lines and the table. Figures are not judged here.
 */
class BenchmarkSmokeIT
{
    @Test
    void compareRunsBothSystemsAndPrintsTheTable() throws Exception
    {
        final Path root = Path.of(System.getProperty("user.dir")).getParent();
        final ProcessBuilder builder = new ProcessBuilder("bash", root.resolve("bin/lockstep").toString(), "bench",
            "compare", "--rates", "500", "--seconds", "1", "--warmup", "1", "--out", "target/bench-smoke")
            .redirectErrorStream(true);
        // The surrounding Maven build has built the jars; a nested build would race it.
        builder.environment().put("LOCKSTEP_NO_BUILD", "1");
        final Process process = builder.start();
        final String output;
        try (InputStreamReader reader = new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))
        {
            final StringBuilder sb = new StringBuilder();
            final char[] chunk = new char[4096];
            int n;
            while ((n = reader.read(chunk)) > 0)
            {
                sb.append(chunk, 0, n);
            }
            output = sb.toString();
        }
        assertTrue(process.waitFor(5, TimeUnit.MINUTES), "bench compare finished");
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("lockstep mode=latency rate=500"), output);
        assertTrue(output.contains("aeron mode=latency rate=500"), output);
        assertTrue(output.contains("compare mode=latency rate=500"), output);
        assertTrue(output.contains("lockstep mode=throughput") && output.contains("aeron mode=throughput"), output);
        // The floors printed beside the clusters: the do-nothing relay, and the same with one follower silent.
        assertTrue(output.matches("(?s).*loopback mode=relay rate=500 .*members_cpu_us_per_msg=[0-9.]+.*"), output);
        assertTrue(output.matches("(?s).*loopback mode=relay_one_ack rate=500 .*members_cpu_us_per_msg=[0-9.]+.*"),
            output);
        assertTrue(output.matches("(?s).*\\n500 +tcp-1ack .*"), "the table has the one-acknowledgement row:\n"
            + output);
        // A smoke test: it carried load at all. Figures are judged by full runs, not here.
        assertTrue(output.matches("(?s).*lockstep mode=latency rate=500 .*achieved=[1-9]\\d* .*"),
            "lockstep carried load:\n" + output);
    }

    @Test
    void snapshotBenchmarkMeasuresPauseAndRestart() throws Exception
    {
        final JavaProcess.Result result = JavaProcess.run("io.lockstep.benchmarks.SnapshotBenchmark", "--orders",
            "20000",
            "--churn", "1");
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().matches("(?s).*lockstep mode=snapshot orders=20000 pause_ms=[0-9.,]+ .*" +
            "restart_full_replay_ms=\\d+ restart_from_snapshot_ms=\\d+ .*"), result.output());
    }

    @Test
    void allocationBenchmarkCoversTheAppendAndSessionPathsInBothThreadingModes() throws Exception
    {
        for (final String threading : new String[]{ "shared", "dedicated" })
        {
            final JavaProcess.Result result = JavaProcess.run("io.lockstep.benchmarks.ConsensusAllocationBenchmark",
                "--appends", "2000", "--threading", threading);
            assertEquals(0, result.exitCode(), result.output());
            for (final String path : new String[]{ "append", "session" })
            {
                assertTrue(result.output().matches("(?s).*lockstep mode=alloc path=" + path +
                    " member=\\d role=leader thread=member allocated_bytes=\\d+ bytes_per_message=[0-9.]+.*"),
                    result.output());
                assertEquals("dedicated".equals(threading), result.output().matches("(?s).*lockstep mode=alloc path=" +
                    path + " member=\\d role=leader thread=service allocated_bytes=\\d+ .*"), result.output());
            }
        }
    }
}
