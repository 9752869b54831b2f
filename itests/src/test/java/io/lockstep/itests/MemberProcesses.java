package io.lockstep.itests;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Real member JVMs on loopback, each started from a generated config file, stopped by PID (SIGKILL) and restarted
 * on the same data directory. Everything started is stopped in {@link #close()}.
 */
final class MemberProcesses implements AutoCloseable
{
    private final Path root;
    private final int count;
    private final int[] ports;
    private final Process[] processes;
    private final List<String> extraJvmArgs;

    MemberProcesses(final Path root, final int count, final List<String> extraJvmArgs) throws IOException
    {
        this.root = root;
        this.count = count;
        this.ports = new int[count];
        this.processes = new Process[count];
        this.extraJvmArgs = List.copyOf(extraJvmArgs);
        for (int i = 0; i < count; i++)
        {
            try (ServerSocket socket = new ServerSocket(0))
            {
                ports[i] = socket.getLocalPort();
            }
        }
        final StringBuilder members = new StringBuilder();
        for (int i = 0; i < count; i++)
        {
            members.append(i == 0 ? "" : ",").append(i).append("=127.0.0.1:").append(ports[i]);
        }
        for (int i = 0; i < count; i++)
        {
            Files.writeString(config(i), "lockstep.member.id=" + i + "\n" +
                "lockstep.members=" + members + "\n" +
                "lockstep.data.dir=" + dataDir(i) + "\n" +
                "lockstep.timeouts=lan\n" +
                "lockstep.durability=batch\n" +
                "lockstep.log.segment.length=1048576\n" +
                "lockstep.log.max.batch=262144\n");
        }
    }

    List<io.lockstep.consensus.Member> members()
    {
        final List<io.lockstep.consensus.Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            members.add(new io.lockstep.consensus.Member(i, "127.0.0.1", ports[i], true));
        }
        return members;
    }

    Path config(final int i)
    {
        return root.resolve("node" + i + ".properties");
    }

    Path dataDir(final int i)
    {
        return root.resolve("node" + i);
    }

    Path logDir(final int i)
    {
        return dataDir(i).resolve("log");
    }

    /**
     * Start a member and wait (bounded) for its ready line.
     */
    void start(final int i) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens", "java.base/java.nio=ALL-UNNAMED"));
        command.addAll(extraJvmArgs);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"),
            "io.lockstep.consensus.ClusterNode", "--config", config(i).toString()));
        final Process process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .start();
        processes[i] = process;
        final CountDownLatch ready = new CountDownLatch(1);
        final Path logFile = root.resolve("node" + i + ".out");
        final Thread pump = new Thread(() ->
        {
            try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = reader.readLine()))
                {
                    Files.writeString(logFile, line + "\n", StandardCharsets.UTF_8,
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                    if (line.startsWith("lockstep node " + i + " ready"))
                    {
                        ready.countDown();
                    }
                }
            }
            catch (final IOException ignore)
            {
                // The process died.
            }
        }, "member-" + i + "-output");
        pump.setDaemon(true);
        pump.start();
        if (!ready.await(30, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("member " + i + " not ready in 30 s; output:\n" + output(i));
        }
    }

    /**
     * SIGKILL: no shutdown hook, no flush.
     */
    void kill(final int i) throws InterruptedException
    {
        final Process process = processes[i];
        if (null != process)
        {
            process.destroyForcibly();
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("member " + i + " did not die");
            }
            processes[i] = null;
        }
    }

    boolean isRunning(final int i)
    {
        return null != processes[i] && processes[i].isAlive();
    }

    String output(final int i)
    {
        try
        {
            final Path file = root.resolve("node" + i + ".out");
            return Files.exists(file) ? Files.readString(file) : "(no output)";
        }
        catch (final IOException ex)
        {
            return "(unreadable: " + ex + ")";
        }
    }

    public void close() throws InterruptedException
    {
        for (int i = 0; i < count; i++)
        {
            kill(i);
        }
    }
}
