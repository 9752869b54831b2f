package io.lockstep.benchmarks;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.consensus.ArchiveRaftLog;
import io.lockstep.consensus.AdminClient;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.FileElectionState;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.TimeoutProfile;
import io.lockstep.consensus.codecs.Role;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Bytes allocated per committed append on each member's consensus thread in steady state (target 0). Three members
 * in this JVM, each agent on its own thread, over real TCP on loopback and archive-log; a client appends 288-byte
 * entries from another thread. Usage: {@code ConsensusAllocationBenchmark [--appends N]} (default 20,000 measured
 * after 20,000 warm-up).
 */
public final class ConsensusAllocationBenchmark
{
    private ConsensusAllocationBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        java.util.logging.Logger.getLogger("io.lockstep").setLevel(java.util.logging.Level.WARNING);
        final int appends = args.length == 2 && "--appends".equals(args[0]) ? Integer.parseInt(args[1]) : 20_000;
        final Path root = Files.createTempDirectory("lockstep-alloc");
        final List<Member> members = new ArrayList<>();
        for (int i = 0; i < 3; i++)
        {
            try (ServerSocket socket = new ServerSocket(0))
            {
                members.add(new Member(i, "127.0.0.1", socket.getLocalPort(), true));
            }
        }
        final List<AgentRunner> runners = new ArrayList<>();
        final List<ConsensusAgent> agents = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                final ArchiveLogConfig log = new ArchiveLogConfig().directory(root.resolve("node" + i).resolve("log"))
                    .durability(DurabilityPolicy.NONE);
                final ConsensusConfig config = ConsensusConfig.of(i, members, TimeoutProfile.LAN);
                final ConsensusAgent agent = new ConsensusAgent(config, new SystemNanoClock(),
                    new TcpTransport(i, members, log.segmentLength(), config.maxBlockBytes() + 65_600, io.lockstep.consensus.codecs.MessageHeaderDecoder.SCHEMA_ID, io.lockstep.consensus.codecs.MessageHeaderDecoder.SCHEMA_VERSION),
                    new ArchiveRaftLog(log), new FileElectionState(root.resolve("node" + i)), new Random(i));
                agents.add(agent);
                final AgentRunner runner = new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null,
                    agent);
                AgentRunner.startOnThread(runner);
                runners.add(runner);
            }

            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            try (AdminClient client = new AdminClient(members))
            {
                final UnsafeBuffer payload = new UnsafeBuffer(new byte[288]);
                drive(client, payload, appends);
                final long[] before = new long[3];
                for (int i = 0; i < 3; i++)
                {
                    before[i] = threads.getThreadAllocatedBytes(runners.get(i).thread().getId());
                }
                drive(client, payload, appends);
                System.out.printf(Locale.ROOT, "consensus allocation over %d committed 288-byte appends:%n", appends);
                for (int i = 0; i < 3; i++)
                {
                    final long bytes = threads.getThreadAllocatedBytes(runners.get(i).thread().getId()) - before[i];
                    final String role = Role.LEADER == agents.get(i).role() ? "leader" : "follower";
                    System.out.printf(Locale.ROOT, "lockstep mode=alloc member=%d role=%s allocated_bytes=%d " +
                        "bytes_per_append=%.3f%n", i, role, bytes, (double)bytes / appends);
                }
            }
        }
        finally
        {
            runners.forEach(AgentRunner::close);
            TempDirs.deleteTree(root);
        }
    }

    private static void drive(final AdminClient client, final UnsafeBuffer payload, final int appends)
    {
        for (int i = 0; i < appends; i++)
        {
            payload.putLong(0, i);
            if (client.append(payload, 0, payload.capacity(), 5000) < 0)
            {
                throw new IllegalStateException("append " + i + " not committed");
            }
        }
    }
}
