package io.lockstep.benchmarks.aeron;

import io.aeron.CommonContext;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.archive.Archive;
import io.aeron.archive.ArchiveThreadingMode;
import io.aeron.archive.client.AeronArchive;
import io.aeron.cluster.ClusteredMediaDriver;
import io.aeron.cluster.ConsensusModule;
import io.aeron.cluster.codecs.CloseReason;
import io.aeron.cluster.service.ClientSession;
import io.aeron.cluster.service.Cluster;
import io.aeron.cluster.service.ClusteredService;
import io.aeron.cluster.service.ClusteredServiceContainer;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ShutdownSignalBarrier;

import java.io.File;
import java.util.concurrent.TimeUnit;

/**
 * One Aeron Cluster 1.46.7 member running an echo service, for the side-by-side benchmark. Settings chosen to match
 * Lockstep's as closely as the designs allow, and stated here: one shared driver thread, backoff idle strategies,
 * no fsync (Aeron's default), leader heartbeat timeout 1 s (its smallest practical value; Lockstep's lan profile
 * detects a dead leader in 200-300 ms), loopback UDP.
 * <p>
 * {@code AeronEchoNode ID BASE_DIR PORT_BASE}; prints "aeron node ID ready" once launched; stops on SIGTERM.
 */
public final class AeronEchoNode
{
    private AeronEchoNode()
    {
    }

    /** Echoes every message back to its session, retrying under back pressure. */
    static final class EchoService implements ClusteredService
    {
        private IdleStrategy idle;

        public void onStart(final Cluster cluster, final Image snapshotImage)
        {
            idle = cluster.idleStrategy();
        }

        public void onSessionOpen(final ClientSession session, final long timestamp)
        {
        }

        public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason closeReason)
        {
        }

        public void onSessionMessage(final ClientSession session, final long timestamp, final DirectBuffer buffer,
            final int offset, final int length, final Header header)
        {
            idle.reset();
            while (session.offer(buffer, offset, length) < 0)
            {
                idle.idle();
            }
        }

        public void onTimerEvent(final long correlationId, final long timestamp)
        {
        }

        public void onTakeSnapshot(final ExclusivePublication snapshotPublication)
        {
        }

        public void onRoleChange(final Cluster.Role newRole)
        {
        }

        public void onTerminate(final Cluster cluster)
        {
        }
    }

    static int port(final int portBase, final int node, final int offset)
    {
        return portBase + node * 10 + offset;
    }

    static String clusterMembers(final int portBase)
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 3; i++)
        {
            sb.append(i)
                .append(",localhost:").append(port(portBase, i, 1))
                .append(",localhost:").append(port(portBase, i, 2))
                .append(",localhost:").append(port(portBase, i, 3))
                .append(",localhost:").append(port(portBase, i, 4))
                .append(",localhost:").append(port(portBase, i, 5))
                .append('|');
        }
        return sb.toString();
    }

    static String ingressEndpoints(final int portBase)
    {
        return "0=localhost:" + port(portBase, 0, 1) + ",1=localhost:" + port(portBase, 1, 1) + ",2=localhost:" +
            port(portBase, 2, 1);
    }

    @SuppressWarnings("try") // the node runs while these are open
    public static void main(final String[] args)
    {
        final int id = Integer.parseInt(args[0]);
        final File baseDir = new File(args[1], "aeron-node" + id);
        final int portBase = Integer.parseInt(args[2]);
        // Sync the recorded log (and the consensus module's files) as Lockstep's batch durability does.
        final int fileSyncLevel = args.length > 3 && "batch".equals(args[3]) ? 1 : 0;
        final String aeronDir = CommonContext.getAeronDirectoryName() + "-lockstep-bench-" + portBase + "-" + id;
        final ShutdownSignalBarrier barrier = new ShutdownSignalBarrier();

        final MediaDriver.Context driver = new MediaDriver.Context()
            .aeronDirectoryName(aeronDir)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(new BackoffIdleStrategy())
            .termBufferSparseFile(true)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true);
        final Archive.Context archive = new Archive.Context()
            .aeronDirectoryName(aeronDir)
            .archiveDir(new File(baseDir, "archive"))
            .controlChannel("aeron:udp?endpoint=localhost:" + port(portBase, id, 5))
            .localControlChannel("aeron:ipc?term-length=64k")
            .replicationChannel("aeron:udp?endpoint=localhost:0")
            .recordingEventsEnabled(false)
            .deleteArchiveOnStart(true)
            .fileSyncLevel(fileSyncLevel)
            .catalogFileSyncLevel(fileSyncLevel)
            .threadingMode(ArchiveThreadingMode.SHARED);
        final AeronArchive.Context archiveClient = new AeronArchive.Context()
            .controlRequestChannel(archive.localControlChannel())
            .controlRequestStreamId(archive.localControlStreamId())
            .controlResponseChannel(archive.localControlChannel())
            .aeronDirectoryName(aeronDir);
        final ConsensusModule.Context consensus = new ConsensusModule.Context()
            .clusterMemberId(id)
            .clusterMembers(clusterMembers(portBase))
            .clusterDir(new File(baseDir, "consensus"))
            .ingressChannel("aeron:udp?term-length=64k")
            .logChannel("aeron:udp?term-length=256k|control-mode=manual|control=localhost:" + port(portBase, id, 6))
            .replicationChannel("aeron:udp?endpoint=localhost:0")
            .leaderHeartbeatTimeoutNs(TimeUnit.SECONDS.toNanos(1))
            .deleteDirOnStart(true)
            .fileSyncLevel(fileSyncLevel)
            .archiveContext(archiveClient.clone());
        final ClusteredServiceContainer.Context service = new ClusteredServiceContainer.Context()
            .aeronDirectoryName(aeronDir)
            .archiveContext(archiveClient.clone())
            .clusterDir(new File(baseDir, "service"))
            .clusteredService(new EchoService());

        try (ClusteredMediaDriver clusteredDriver = ClusteredMediaDriver.launch(driver, archive, consensus);
            ClusteredServiceContainer container = ClusteredServiceContainer.launch(service))
        {
            System.out.println("aeron node " + id + " ready");
            System.out.flush();
            barrier.await();
        }
    }
}
