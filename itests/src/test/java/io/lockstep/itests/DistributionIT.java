package io.lockstep.itests;

import io.lockstep.localcluster.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/lockstep dist} builds a tarball; unpacked elsewhere, its own launcher (nothing from the build tree)
 * runs three members from the shipped configs and its tool finds a leader and shuts the cluster down in order.
 */
class DistributionIT
{
    @TempDir
    Path dir;

    @Test
    void theTarballRunsAClusterWithNothingButAJdk() throws Exception
    {
        final Path root = Path.of(System.getProperty("user.dir")).getParent();
        final Result dist = run(root, List.of(root.resolve("bin/lockstep").toString(), "dist"), 300);
        assertEquals(0, dist.exitCode(), dist.output());
        final Path tarball = root.resolve("target/dist/lockstep-0.1.0-SNAPSHOT.tar.gz");
        assertTrue(Files.isRegularFile(tarball), dist.output());
        assertEquals(0, run(dir, List.of("tar", "xzf", tarball.toString()), 60).exitCode());
        try (Stream<Path> jars = Files.list(dir.resolve("lockstep-0.1.0-SNAPSHOT/lib")))
        {
            // What a member runs: no test kit, simulation, JUnit or Testcontainers.
            final List<String> names = jars.map(p -> p.getFileName().toString()).toList();
            assertTrue(names.stream().anyMatch(n -> n.startsWith("cluster-consensus-")), names.toString());
            assertTrue(names.stream().noneMatch(n -> n.startsWith("testkit-") || n.startsWith("simulation-") ||
                n.startsWith("junit-") || n.startsWith("testcontainers-")), names.toString());
        }
        final Path home = dir.resolve("lockstep-0.1.0-SNAPSHOT");
        final String launcher = home.resolve("bin/lockstep").toString();
        assertEquals(0, run(home, List.of(launcher, "secret", "config/cluster.secret"), 30).exitCode());
        assertEquals(0, run(home, List.of(launcher, "secret", "config/tool.secret"), 30).exitCode());

        final StringBuilder members = new StringBuilder();
        for (int i = 0; i < 3; i++)
        {
            members.append(i == 0 ? "" : ",").append(i).append("=127.0.0.1:").append(FreePorts.next());
        }
        final List<String> overrides = List.of("-Dlockstep.members=" + members, "-Dlockstep.metrics.port=0",
            "-Dlockstep.service=io.lockstep.examples.EchoService");
        final List<Process> nodes = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                final List<String> command = new ArrayList<>(List.of(launcher, "node", "--config",
                    "config/node" + i + ".properties"));
                command.addAll(overrides);
                nodes.add(new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("node" + i + ".out").toFile()).start());
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true)
            {
                final List<String> status = new ArrayList<>(List.of(launcher, "tool", "status", "--config",
                    "config/node0.properties"));
                status.addAll(overrides);
                final Result r = run(home, status, 60);
                if (r.output().contains("role=leader"))
                {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "a leader within 30 s: " + r.output() + outputs());
            }
            for (final Process node : nodes)
            {
                // The launcher execs the member's JVM, so the process started is that JVM.
                final List<String> jvmArgs = node.info().arguments().map(List::of).orElse(List.of());
                assertTrue(jvmArgs.contains("-XX:PerMethodTrapLimit=0"), "member JVM started with " + jvmArgs);
            }
            final List<String> shutdown = new ArrayList<>(List.of(launcher, "tool", "shutdown", "--config",
                "config/node0.properties", "--timeout-ms", "30000"));
            shutdown.addAll(overrides);
            final Result stopped = run(home, shutdown, 60);
            assertEquals(0, stopped.exitCode(), stopped.output());
            for (int i = 0; i < 3; i++)
            {
                assertTrue(nodes.get(i).waitFor(30, TimeUnit.SECONDS), "member " + i + " stops" + outputs());
                assertEquals(0, nodes.get(i).exitValue(), outputs());
            }
            assertTrue(Files.isDirectory(home.resolve("data/node0/log")), "data where the shipped config says");
        }
        finally
        {
            nodes.forEach(Process::destroyForcibly);
        }
    }

    private String outputs() throws IOException
    {
        final StringBuilder all = new StringBuilder();
        for (int i = 0; i < 3; i++)
        {
            final Path out = dir.resolve("node" + i + ".out");
            all.append("\n--- node ").append(i).append('\n').append(Files.exists(out) ? Files.readString(out) : "");
        }
        return all.toString();
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result run(final Path workDir, final List<String> command, final int timeoutS) throws Exception
    {
        final ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile())
            .redirectErrorStream(true);
        // Inside the Maven build the jars exist already; a nested build would race the outer one.
        builder.environment().put("LOCKSTEP_NO_BUILD", "1");
        final Process process = builder.start();
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(timeoutS, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException(command + " did not finish in " + timeoutS + " s");
        }
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }
}
