package io.lockstep.testkit;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.IoUtil;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@link TestCluster} as member processes on loopback (a {@link LocalCluster}), for machines without Docker: kill
 * is SIGKILL, stop SIGTERM, pause SIGSTOP and unpause SIGCONT. A partition needs a network per member, which
 * processes on one loopback do not have: {@link #isolate} and {@link #heal} refuse.
 */
public final class ProcessCluster implements TestCluster
{
    private final LocalCluster local;
    private final int count;

    /**
     * @param members      number of members.
     * @param serviceClass your service's class name.
     * @param workDir      configs, data and output go here.
     */
    public ProcessCluster(final int members, final String serviceClass, final Path workDir) throws IOException
    {
        this.local = new LocalCluster(workDir, members, "none", 16 * 1024 * 1024, serviceClass);
        this.count = members;
    }

    /**
     * @return the process cluster underneath, for what only it does (configuration keys, log directories).
     */
    public LocalCluster local()
    {
        return local;
    }

    public void start() throws IOException
    {
        for (int i = 0; i < count; i++)
        {
            restart(i);
        }
    }

    public void kill(final int i)
    {
        try
        {
            local.kill(i);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted killing member " + i, ex);
        }
    }

    public void stop(final int i)
    {
        local.stop(i);
    }

    public void restart(final int i)
    {
        try
        {
            local.start(i);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot start member " + i + ": " + ex.getMessage(), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting member " + i, ex);
        }
    }

    public void pause(final int i)
    {
        signal(i, "STOP");
    }

    public void unpause(final int i)
    {
        signal(i, "CONT");
    }

    public void isolate(final int i)
    {
        throw new UnsupportedOperationException("a partition needs a network per member: run with Docker " +
            "(TestCluster.create picks containers when a Docker engine answers)");
    }

    public void heal(final int i)
    {
        isolate(i);
    }

    public void wipe(final int i)
    {
        kill(i);
        IoUtil.delete(local.dataDir(i).toFile(), true);
        try
        {
            Files.createDirectories(local.dataDir(i));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot recreate " + local.dataDir(i), ex);
        }
    }

    public List<Member> members()
    {
        return local.members();
    }

    public AdminClient adminClient()
    {
        return local.adminClient();
    }

    public ClusterClient client(final ClusterClient.EgressListener listener)
    {
        return ClusterClient.connect(local.members(), listener);
    }

    public String logs(final int i)
    {
        return local.output(i);
    }

    public int size()
    {
        return count;
    }

    public void close()
    {
        local.close();
    }

    private void signal(final int i, final String signal)
    {
        final long pid = local.pid(i);
        if (pid < 0)
        {
            throw new IllegalStateException("member " + i + " is not running");
        }
        try
        {
            final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
            if (0 != kill.waitFor())
            {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot signal member " + i + ": " + ex.getMessage(), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted signalling member " + i, ex);
        }
    }
}
