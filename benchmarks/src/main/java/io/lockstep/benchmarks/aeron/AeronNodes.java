package io.lockstep.benchmarks.aeron;

import io.lockstep.benchmarks.TempDirs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Three {@link AeronEchoNode} processes on loopback, for the Aeron side of the benchmarks: started on this JVM's
 * classpath (Aeron's own), each waited for until ready, stopped with SIGTERM (SIGKILL after 10 s) and their
 * directory removed on close.
 */
final class AeronNodes implements AutoCloseable
{
    private final Path root;
    private final int portBase;
    private final List<Process> processes = new ArrayList<>();
    private final String durability;

    AeronNodes() throws Exception
    {
        this("none");
    }

    /**
     * @param durability "batch": the archive and consensus module sync their files (fileSyncLevel 1), the closest
     *                   Aeron setting to Lockstep's fsync before acknowledging; "none": page cache only.
     */
    AeronNodes(final String durability) throws Exception
    {
        this.durability = durability;
        root = Files.createTempDirectory("aeron-bench");
        portBase = 20_000 + (int)(ProcessHandle.current().pid() % 1000) * 40;
        for (int i = 0; i < 3; i++)
        {
            processes.add(start(i));
        }
    }

    int portBase()
    {
        return portBase;
    }

    Process process(final int id)
    {
        return processes.get(id);
    }

    long[] pidsWithClient()
    {
        return new long[]{ processes.get(0).pid(), processes.get(1).pid(), processes.get(2).pid(),
            ProcessHandle.current().pid() };
    }

    private Process start(final int id) throws Exception
    {
        final Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens",
                "java.base/java.nio=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"),
            AeronEchoNode.class.getName(), Integer.toString(id), root.toString(), Integer.toString(portBase),
            durability)
            .redirectErrorStream(true).start();
        final CountDownLatch ready = new CountDownLatch(1);
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader r = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = r.readLine()))
                {
                    if (line.startsWith("aeron node " + id + " ready"))
                    {
                        ready.countDown();
                    }
                    else if (line.contains("Exception") || line.contains("ERROR"))
                    {
                        System.out.println("aeron node " + id + ": " + line);
                    }
                }
            }
            catch (final Exception ignore)
            {
                // The process ended.
            }
        }, "aeron-node-" + id);
        pump.setDaemon(true);
        pump.start();
        if (!ready.await(60, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("aeron node " + id + " not ready in 60 s");
        }
        return process;
    }

    public void close() throws IOException
    {
        for (final Process p : processes)
        {
            p.destroy();
        }
        for (final Process p : processes)
        {
            try
            {
                if (!p.waitFor(10, TimeUnit.SECONDS))
                {
                    p.destroyForcibly();
                }
            }
            catch (final InterruptedException ex)
            {
                // Interrupted while the nodes exit: kill them now rather than leave them behind.
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        TempDirs.deleteTree(root);
    }
}
