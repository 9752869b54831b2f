package io.lockstep.consensus.sim;

import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.LogEntryType;
import io.lockstep.consensus.Member;
import io.lockstep.consensus.Transport;
import io.lockstep.consensus.codecs.Role;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * A whole cluster in one thread from a seed: members, a driver, a network with TCP's semantics, crashes and restarts
 * with crash-consistent storage, partitions and healing. After every step it checks the safety invariants; then a
 * liveness phase heals everything and requires the cluster to converge. The same seed replays the same run.
 */
public final class Simulation
{
    /** Thrown with the seed and the step when an invariant breaks. */
    static final class InvariantViolation extends AssertionError
    {
        private static final long serialVersionUID = 1L;

        InvariantViolation(final String message)
        {
            super(message);
        }
    }

    private static final long ELECTION_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long HEARTBEAT_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final int MAX_BATCH = 64 * 1024;

    private final long seed;
    private final Random random;
    private final int memberCount;
    private final int[] memberIds;
    private final List<Member> members = new ArrayList<>();
    private final SimNetwork network;
    private final SimDriver driver;
    private final SimElectionState[] electionStates;
    private final SimLog[] logs;
    private final ConsensusAgent[] agents;
    private final long[] lastCommit;
    private final long[] checkedUpTo;
    private final Map<Long, Integer> leaderOfTerm = new HashMap<>();
    private final Long2LongHashMap historyIndexByPosition = new Long2LongHashMap(-1);
    private final LongArrayList historyPositions = new LongArrayList();
    private final LongArrayList historyHashes = new LongArrayList();
    private long historyEnd;
    private long nowNs = TimeUnit.SECONDS.toNanos(1);
    private long step;
    private final int intensity;
    int crashes;
    int partitions;
    int elections;

    Simulation(final long seed, final int memberCount)
    {
        this.seed = seed;
        this.random = new Random(seed);
        this.memberCount = memberCount;
        this.memberIds = new int[memberCount];
        // Fault rate varies by seed: calm runs test progress, stormy ones test safety under churn.
        this.intensity = new int[]{ 1, 3, 10 }[(int)Math.floorMod(seed, 3L)];
        final int[] endpoints = new int[memberCount + 1];
        for (int i = 0; i < memberCount; i++)
        {
            memberIds[i] = i;
            endpoints[i] = i;
            members.add(new Member(i, "sim", 0, true));
        }
        endpoints[memberCount] = Transport.CLIENT_ENDPOINT_BASE;
        network = new SimNetwork(random, endpoints, TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(3),
            TimeUnit.MILLISECONDS.toNanos(120));
        network.now(nowNs);
        driver = new SimDriver(network.transportFor(Transport.CLIENT_ENDPOINT_BASE), random, memberIds);
        electionStates = new SimElectionState[memberCount];
        logs = new SimLog[memberCount];
        agents = new ConsensusAgent[memberCount];
        lastCommit = new long[memberCount];
        checkedUpTo = new long[memberCount];
        for (int i = 0; i < memberCount; i++)
        {
            electionStates[i] = new SimElectionState();
            logs[i] = new SimLog(MAX_BATCH);
            start(i);
        }
    }

    private void start(final int i)
    {
        final ConsensusConfig config = new ConsensusConfig(i, members, ELECTION_TIMEOUT_NS, HEARTBEAT_NS, 16 * 1024,
            64 * 1024, 1024);
        network.setUp(i, true);
        agents[i] = new ConsensusAgent(config, () -> nowNs, network.transportFor(i), logs[i], electionStates[i],
            new Random(random.nextLong()));
        lastCommit[i] = 0;
        checkedUpTo[i] = 0;
    }

    private void crash(final int i)
    {
        agents[i] = null;
        network.setUp(i, false);
        logs[i] = logs[i].afterCrash(random);
        crashes++;
    }

    /**
     * @param faultSteps steps with faults, then a liveness phase without.
     */
    void run(final int faultSteps)
    {
        for (int s = 0; s < faultSteps; s++)
        {
            step(true, random.nextInt(3) == 0);
        }
        network.healAll();
        for (int i = 0; i < memberCount; i++)
        {
            if (null == agents[i])
            {
                start(i);
            }
        }
        final long ackedBefore = driver.acked.size();
        final long deadline = step + 40_000;
        while (!converged(ackedBefore))
        {
            if (step > deadline)
            {
                throw violation("no convergence within 40,000 steps after healing");
            }
            // New appends until the healed cluster has acknowledged some, then quiet, so the logs can meet.
            step(false, driver.acked.size() < ackedBefore + 10);
        }
        checkAckedEntriesCommitted();
    }

    private void step(final boolean faults, final boolean driverSends)
    {
        step++;
        nowNs += random.nextInt(1_000) * 1_000L;
        network.now(nowNs);
        if (faults)
        {
            injectFault();
        }
        final int offset = random.nextInt(memberCount);
        for (int k = 0; k < memberCount; k++)
        {
            final int i = (offset + k) % memberCount;
            // A member is sometimes slow: it skips a duty cycle.
            if (null != agents[i] && random.nextInt(10) != 0)
            {
                agents[i].doWork();
            }
        }
        driver.doWork(nowNs, driverSends);
        checkInvariants();
    }

    private void injectFault()
    {
        final int roll = random.nextInt(1000) / intensity;
        // Half the time the fault is aimed at a leader: that is where elections, conflicts and catch-up happen.
        final int leader = currentLeader();
        final int i = leader >= 0 && random.nextBoolean() ? leader : random.nextInt(memberCount);
        if (roll < 4 && null != agents[i])
        {
            crash(i);
        }
        else if (roll < 8 && null != agents[i])
        {
            // Killed and restarted at once by a supervisor: only what was durable comes back.
            crash(i);
            start(i);
        }
        else if (roll < 18 && null == agents[i])
        {
            start(i);
        }
        else if (roll < 22)
        {
            network.partition(i, 1 + random.nextInt(2));
            partitions++;
        }
        else if (roll < 32)
        {
            network.healAll();
        }
    }

    private int currentLeader()
    {
        for (int i = 0; i < memberCount; i++)
        {
            if (null != agents[i] && Role.LEADER == agents[i].role())
            {
                return i;
            }
        }
        return -1;
    }

    private void checkInvariants()
    {
        for (int i = 0; i < memberCount; i++)
        {
            final ConsensusAgent agent = agents[i];
            if (null == agent)
            {
                continue;
            }
            if (Role.LEADER == agent.role())
            {
                final Integer previous = leaderOfTerm.putIfAbsent(agent.term(), i);
                if (null == previous)
                {
                    elections++;
                }
                else if (previous != i)
                {
                    throw violation("two leaders in term " + agent.term() + ": " + previous + " and " + i);
                }
            }
            final long commit = agent.commitPosition();
            if (commit < lastCommit[i])
            {
                throw violation("member " + i + " commit went back from " + lastCommit[i] + " to " + commit);
            }
            lastCommit[i] = commit;
            if (commit > logs[i].appendedPosition())
            {
                throw violation("member " + i + " commit " + commit + " beyond its log " + logs[i].appendedPosition());
            }
            checkCommittedPrefix(i, commit);
        }
    }

    /**
     * Every member's committed frames must be the same frames at the same positions: the committed history, built
     * from whichever member committed a position first.
     */
    private void checkCommittedPrefix(final int i, final long commit)
    {
        final DirectBuffer data = logs[i].buffer();
        long p = checkedUpTo[i];
        while (p < commit)
        {
            final int frameLength = data.getInt((int)p, LITTLE_ENDIAN);
            final long hash = frameHash(data, (int)p, frameLength);
            final long index = historyIndexByPosition.get(p);
            if (index >= 0)
            {
                if (historyHashes.getLong((int)index) != hash)
                {
                    throw violation("member " + i + " committed a different frame at position " + p);
                }
            }
            else
            {
                if (p != historyEnd)
                {
                    throw violation("member " + i + " committed a frame at " + p + " but the history ends at " +
                        historyEnd + " with no frame starting there");
                }
                historyIndexByPosition.put(p, historyPositions.size());
                historyPositions.addLong(p);
                historyHashes.addLong(hash);
                historyEnd = p + FrameDescriptor.alignedLength(frameLength);
            }
            p += FrameDescriptor.alignedLength(frameLength);
        }
        if (p != commit)
        {
            throw violation("member " + i + " commit " + commit + " is not a frame boundary");
        }
        checkedUpTo[i] = p;
    }

    private boolean converged(final long ackedBefore)
    {
        int leader = -1;
        long maxTerm = -1;
        for (int i = 0; i < memberCount; i++)
        {
            maxTerm = Math.max(maxTerm, agents[i].term());
            if (Role.LEADER == agents[i].role())
            {
                leader = i;
            }
        }
        if (leader < 0 || agents[leader].term() != maxTerm || driver.acked.size() < ackedBefore + 10)
        {
            return false;
        }
        final long end = logs[leader].appendedPosition();
        for (int i = 0; i < memberCount; i++)
        {
            if (agents[i].leaderId() != leader || agents[i].commitPosition() != end || logs[i].appendedPosition() != end)
            {
                return false;
            }
        }
        return historyEnd == end;
    }

    /**
     * No acknowledged append is lost: each sits in the committed history at the position its ack named.
     */
    private void checkAckedEntriesCommitted()
    {
        final DirectBuffer data = logs[0].buffer();
        driver.acked.forEach((correlationId, endPosition) ->
        {
            final long start = endPosition - FrameDescriptor.alignedFrameLength(SimDriver.PAYLOAD_LENGTH);
            if (endPosition > historyEnd || historyIndexByPosition.get(start) < 0 ||
                data.getInt((int)start + TYPE_OFFSET, LITTLE_ENDIAN) != LogEntryType.CLIENT_APPEND ||
                data.getLong((int)start + HEADER_LENGTH) != correlationId)
            {
                throw violation("acknowledged append " + correlationId + " at " + endPosition + " is not committed");
            }
        });
    }

    private static long frameHash(final DirectBuffer data, final int offset, final int frameLength)
    {
        long h = 0xcbf29ce484222325L ^ data.getLong(offset + TERM_OFFSET, LITTLE_ENDIAN);
        h = h * 0x100000001b3L ^ data.getInt(offset + TYPE_OFFSET, LITTLE_ENDIAN);
        for (int i = offset + HEADER_LENGTH; i < offset + frameLength; i++)
        {
            h = (h ^ data.getByte(i)) * 0x100000001b3L;
        }
        return h;
    }

    private String describe()
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < memberCount; i++)
        {
            final ConsensusAgent a = agents[i];
            sb.append("\n  member ").append(i).append(": ");
            if (null == a)
            {
                sb.append("down");
                continue;
            }
            sb.append(a.role()).append(" term=").append(a.term()).append(" leader=").append(a.leaderId())
                .append(" log=").append(logs[i].appendedPosition()).append(" commit=").append(a.commitPosition());
        }
        sb.append("\n  history end=").append(historyEnd).append(" acked=").append(driver.acked.size())
            .append(" sent=").append(driver.sent);
        return sb.toString();
    }

    private InvariantViolation violation(final String what)
    {
        return new InvariantViolation("seed " + seed + " step " + step + ": " + what + describe());
    }

    long step()
    {
        return step;
    }

    long historyEnd()
    {
        return historyEnd;
    }

    int acked()
    {
        return driver.acked.size();
    }
}
