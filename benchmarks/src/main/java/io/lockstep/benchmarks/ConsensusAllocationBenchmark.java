package io.lockstep.benchmarks;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.TimeoutProfile;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.service.ServiceHandoff;
import io.lockstep.consensus.service.ServiceIdleStrategy;
import io.lockstep.consensus.service.ServiceMember;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileElectionState;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.EchoService;
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
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Bytes allocated per message on each member's thread in steady state (target 0), on both paths a message takes:
 * a driver's append through consensus, and a client session's message through consensus, the service container, the
 * echo service and back as egress. Three members running the echo service in this JVM, each on its own thread, over
 * real TCP on loopback and archive-log; the drivers run on this thread. Usage: {@code ConsensusAllocationBenchmark
 * [--appends N]} (default 20,000 measured after 20,000 warm-up, per path).
 */
public final class ConsensusAllocationBenchmark
{
    private ConsensusAllocationBenchmark()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Logger.getLogger("io.lockstep").setLevel(Level.WARNING);
        int appends = 20_000;
        boolean dedicated = false;
        for (int a = 0; a + 1 < args.length; a += 2)
        {
            switch (args[a])
            {
                case "--appends" -> appends = Integer.parseInt(args[a + 1]);
                case "--threading" -> dedicated = "dedicated".equals(args[a + 1]);
                default -> throw new IllegalArgumentException("usage: bench alloc [--appends N] " +
                    "[--threading shared|dedicated]");
            }
        }
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
        final List<ServiceMember> services = new ArrayList<>();
        final List<AgentRunner> serviceRunners = new ArrayList<>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                final ArchiveLogConfig log = new ArchiveLogConfig().directory(root.resolve("node" + i).resolve("log"))
                    .durability(DurabilityPolicy.NONE);
                final ConsensusConfig config = ConsensusConfig.of(i, members, TimeoutProfile.LAN);
                final TcpTransport transport = new TcpTransport(i, members, log.segmentLength(),
                    config.maxBlockBytes() + 65_600, null, MemberProtocolShapes.create());
                final ArchiveRaftLog raftLog = new ArchiveRaftLog(log);
                final ConsensusAgent agent = new ConsensusAgent(config, new SystemNanoClock(),
                    ClusterNode.newWallClock(), transport, raftLog,
                    new FileElectionState(root.resolve("node" + i)), new Random(i));
                agents.add(agent);
                final ServiceHandoff handoff = dedicated ? new ServiceHandoff(true) : null;
                final ServiceMember member = new ServiceMember(agent, transport, raftLog, EchoService::new, null,
                    new ServiceMember.SnapshotSettings(0, 1, () -> 0), TimeUnit.SECONDS.toNanos(10), 16, 256 * 1024,
                    1024, new BackoffIdleStrategy(), handoff);
                services.add(member);
                if (dedicated)
                {
                    final AgentRunner serviceRunner = new AgentRunner(new ServiceIdleStrategy(handoff, 100, 10),
                        Throwable::printStackTrace, null, member.serviceAgent());
                    AgentRunner.startOnThread(serviceRunner);
                    serviceRunners.add(serviceRunner);
                }
                final AgentRunner runner = new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null,
                    member);
                AgentRunner.startOnThread(runner);
                runners.add(runner);
            }

            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            try (AdminClient client = new AdminClient(members))
            {
                final UnsafeBuffer payload = new UnsafeBuffer(new byte[288]);
                drive(client, payload, appends);
                long[] before = allocated(threads, runners);
                long[] serviceBefore = allocated(threads, serviceRunners);
                drive(client, payload, appends);
                System.out.printf(Locale.ROOT, "consensus allocation over %d committed 288-byte appends:%n", appends);
                report(threads, runners, agents, before, appends, "append", "member");
                report(threads, serviceRunners, agents, serviceBefore, appends, "append", "service");
            }

            final long[] echoed = new long[1];
            try (ClusterClient session = ClusterClient.connect(members, (sessionId, sequence, b, o, l) -> echoed[0]++))
            {
                if (!session.awaitConnected(20_000))
                {
                    throw new IllegalStateException("no session in 20 s");
                }
                final UnsafeBuffer payload = new UnsafeBuffer(new byte[288]);
                echo(session, payload, echoed, appends);
                final long[] before = allocated(threads, runners);
                final long[] serviceBefore = allocated(threads, serviceRunners);
                // The client runs on this thread: what a gateway pays per message on its own hot path.
                final long clientBefore = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                echo(session, payload, echoed, appends);
                final long clientBytes = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) -
                    clientBefore;
                System.out.printf(Locale.ROOT, "session path allocation over %d 288-byte client messages echoed by " +
                    "the service:%n", appends);
                report(threads, runners, agents, before, appends, "session", "member");
                report(threads, serviceRunners, agents, serviceBefore, appends, "session", "service");
                System.out.printf(Locale.ROOT, "lockstep mode=alloc path=session side=client allocated_bytes=%d " +
                    "bytes_per_message=%.3f%n", clientBytes, (double)clientBytes / appends);
            }
        }
        finally
        {
            runners.forEach(AgentRunner::close);
            serviceRunners.forEach(AgentRunner::close);
            TempDirs.deleteTree(root);
        }
    }

    private static long[] allocated(
        final com.sun.management.ThreadMXBean threads, final List<AgentRunner> runners)
    {
        final long[] bytes = new long[runners.size()];
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = threads.getThreadAllocatedBytes(runners.get(i).thread().getId());
        }
        return bytes;
    }

    private static void report(
        final com.sun.management.ThreadMXBean threads,
        final List<AgentRunner> runners,
        final List<ConsensusAgent> agents,
        final long[] before,
        final int messages,
        final String path,
        final String thread)
    {
        for (int i = 0; i < runners.size(); i++)
        {
            final long bytes = threads.getThreadAllocatedBytes(runners.get(i).thread().getId()) - before[i];
            final String role = Role.LEADER == agents.get(i).role() ? "leader" : "follower";
            System.out.printf(Locale.ROOT, "lockstep mode=alloc path=%s member=%d role=%s thread=%s " +
                "allocated_bytes=%d bytes_per_message=%.3f%n", path, i, role, thread, bytes, (double)bytes / messages);
        }
    }

    /** Up to 32 in flight, until every message has come back. */
    private static void echo(
        final ClusterClient session, final UnsafeBuffer payload, final long[] echoed, final int messages)
    {
        final long target = echoed[0] + messages;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long sent = 0;
        while (echoed[0] < target)
        {
            if (sent < messages && sent - (echoed[0] - (target - messages)) < 32)
            {
                payload.putLong(0, sent);
                if (session.offer(payload, 0, payload.capacity()) >= 0)
                {
                    sent++;
                }
            }
            session.poll();
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("only " + (messages - (target - echoed[0])) + " of " + messages +
                    " echoed in 120 s");
            }
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
