package io.lockstep.testkit;

import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.tool.AdminClient;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A cluster of members running your service, for a failover test, with the faults it needs. {@link #create} gives
 * containers ({@link ContainerCluster}) where a Docker engine answers, and member processes on loopback
 * ({@link ProcessCluster}) where none does; processes can do everything but {@link #isolate} and {@link #heal}
 * (a partition needs a network of its own), which throw {@link UnsupportedOperationException} there.
 */
public interface TestCluster extends AutoCloseable
{
    /**
     * @param members number of members (3 for the usual cluster).
     * @param service your service class (public no-argument constructor), on this JVM's class path.
     * @param workDir configs and data go here.
     * @return containers if Docker answers, else processes; not started.
     */
    static TestCluster create(final int members, final Class<? extends ClusteredService> service, final Path workDir)
        throws IOException
    {
        return DockerRequirement.available() ? ContainerCluster.of(members, service, workDir) :
            new ProcessCluster(members, service.getName(), workDir);
    }

    /** Start every member and wait until each listens. */
    void start() throws IOException;

    /** SIGKILL member i; its data stays for {@link #restart}. */
    void kill(int i);

    /** Stop member i in order (SIGTERM). */
    void stop(int i);

    /** Start member i again on its data (after kill, stop or wipe) and wait until it listens. */
    void restart(int i);

    /** Freeze member i: its sockets stay open and silent (a hung process). */
    void pause(int i);

    void unpause(int i);

    /** Cut member i off from the other members (containers only). */
    void isolate(int i);

    /** Undo {@link #isolate} (containers only). */
    void heal(int i);

    /** Kill member i and delete its data: restarted, it rejoins empty. */
    void wipe(int i);

    /** @return the members as this JVM reaches them, for clients and tools. */
    List<Member> members();

    /** @return a tool client holding the cluster secret (close it). */
    AdminClient adminClient();

    /** @return a client of this cluster, connecting (close it). */
    ClusterClient client(ClusterClient.EgressListener listener);

    /** @return the leader's id, waiting up to the timeout; throws {@link AssertionError} if there is none. */
    default int awaitLeader(final Duration timeout)
    {
        try (AdminClient admin = adminClient())
        {
            final int leader = admin.awaitLeader(timeout.toMillis());
            if (leader < 0)
            {
                throw new AssertionError("no leader within " + timeout + "\n" + logs());
            }
            return leader;
        }
    }

    /**
     * Wait until every member answers, all applied the same log, and all report the same state hash there.
     *
     * @return their statuses; throws {@link AssertionError} naming the disagreement otherwise.
     */
    default Map<Integer, AdminClient.Status> assertReplicasAgree(final Duration timeout)
    {
        try (AdminClient admin = adminClient())
        {
            return Replicas.assertAgree(admin, timeout);
        }
    }

    /** @return member i's output so far. */
    String logs(int i);

    /** @return the number of members. */
    int size();

    /** @return every member's recent output (the last 4,000 characters of each), for a failure message. */
    default String logs()
    {
        final StringBuilder all = new StringBuilder();
        for (int i = 0; i < size(); i++)
        {
            final String out = logs(i);
            all.append("--- member ").append(i).append('\n').append(out, Math.max(0, out.length() - 4000),
                out.length());
        }
        return all.toString();
    }

    @Override
    void close();
}
