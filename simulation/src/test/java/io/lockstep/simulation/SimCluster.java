package io.lockstep.simulation;

import io.lockstep.archive.FrameDescriptor;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.LogClock;
import io.lockstep.consensus.LogEntryType;
import io.lockstep.consensus.MemoryElectionState;
import io.lockstep.consensus.codecs.Role;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static io.lockstep.archive.FrameDescriptor.TERM_OFFSET;
import static io.lockstep.archive.FrameDescriptor.TYPE_OFFSET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * A whole cluster in one thread: members (voting or not), a driver, a simulated network, crash-consistent storage,
 * and the safety invariants checked after every step. Scenario tests steer it by hand; {@link Simulation} drives it
 * with seeded faults.
 * <p>
 * Why beside {@link SimServiceCluster}: this one runs the Raft core alone, with a driver appending raw entries, and
 * checks Raft's own invariants frame by frame (committed frames identical on every member, commit never moving
 * back); the other runs whole service members and checks replicated service state. Both use the same simulated
 * network, log and clock. Folding one into the other would change what every seed draws, so the 6,000 seeds' figures
 * could no longer be compared run for run; that is a step of its own.
 */
final class SimCluster
{
    /** Thrown with the seed and step when an invariant breaks. */
    static final class InvariantViolation extends AssertionError
    {
        private static final long serialVersionUID = 1L;

        InvariantViolation(final String message)
        {
            super(message);
        }
    }

    static final long ELECTION_TIMEOUT_NS = SimServiceCluster.ELECTION_TIMEOUT_NS;
    static final long HEARTBEAT_NS = SimServiceCluster.HEARTBEAT_NS;
    private static final int MAX_BATCH = 64 * 1024;

    final long seed;
    final Random random;
    final int memberCount;
    final SimNetwork network;
    final SimDriver driver;
    private final int[] memberIds;
    private final List<Member> members = new ArrayList<>();
    private final MemoryElectionState[] electionStates;
    private final SimLog[] logs;
    private final ConsensusAgent[] agents;
    private final long[] lastCommit;
    private final long[] checkedUpTo;
    private final Map<Long, Integer> leaderOfTerm = new HashMap<>();
    private final Long2LongHashMap historyIndexByPosition = new Long2LongHashMap(-1);
    private final LongArrayList historyHashes = new LongArrayList();
    private long historyEnd;
    private long historyLogTimeNs = Long.MIN_VALUE;
    final SimWallClock[] wallClocks;
    private long nowNs = TimeUnit.SECONDS.toNanos(1);
    private long step;
    int crashes;
    int elections;
    private final boolean syncStandby;
    private final int relay;

    /**
     * @param voting one flag per member: false makes it non-voting.
     */
    SimCluster(final long seed, final boolean[] voting, final long maxStallNs)
    {
        this(seed, voting, maxStallNs, false);
    }

    /**
     * @param syncStandby the synchronous standby option on every member (see ConsensusConfig#syncStandby).
     */
    SimCluster(final long seed, final boolean[] voting, final long maxStallNs, final boolean syncStandby)
    {
        this(seed, voting, maxStallNs, syncStandby, -1);
    }

    /**
     * @param relay the standby that feeds the others (see ConsensusConfig#relay), or -1.
     */
    SimCluster(final long seed, final boolean[] voting, final long maxStallNs, final boolean syncStandby,
        final int relay)
    {
        this.relay = relay;
        this.syncStandby = syncStandby;
        this.seed = seed;
        this.random = new Random(seed);
        this.memberCount = voting.length;
        this.memberIds = new int[memberCount];
        final int[] endpoints = new int[memberCount + 1];
        for (int i = 0; i < memberCount; i++)
        {
            memberIds[i] = i;
            endpoints[i] = i;
            members.add(new Member(i, "sim", 0, voting[i]));
        }
        endpoints[memberCount] = Transport.CLIENT_ENDPOINT_BASE;
        network = new SimNetwork(random, endpoints, TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(3),
            maxStallNs);
        network.now(nowNs);
        driver = new SimDriver(network.transportFor(Transport.CLIENT_ENDPOINT_BASE), random, memberIds);
        electionStates = new MemoryElectionState[memberCount];
        logs = new SimLog[memberCount];
        agents = new ConsensusAgent[memberCount];
        lastCommit = new long[memberCount];
        checkedUpTo = new long[memberCount];
        wallClocks = new SimWallClock[memberCount];
        for (int i = 0; i < memberCount; i++)
        {
            wallClocks[i] = new SimWallClock(() -> nowNs, random);
            electionStates[i] = new MemoryElectionState();
            logs[i] = new SimLog(MAX_BATCH);
            start(i);
        }
    }

    static boolean[] allVoting(final int count)
    {
        final boolean[] voting = new boolean[count];
        Arrays.fill(voting, true);
        return voting;
    }

    void start(final int i)
    {
        final ConsensusConfig config = new ConsensusConfig().memberId(i).members(members)
            .timeouts(ELECTION_TIMEOUT_NS, HEARTBEAT_NS).maxBlockBytes(16 * 1024).maxInFlightBytes(64 * 1024)
            .maxPendingClientAppends(1024).syncStandby(syncStandby).relay(relay);
        network.setUp(i, true);
        agents[i] = new ConsensusAgent(config, () -> nowNs, wallClocks[i], network.transportFor(i), logs[i],
            electionStates[i],
            new Random(random.nextLong()));
        lastCommit[i] = 0;
        checkedUpTo[i] = 0;
    }

    void crash(final int i)
    {
        agents[i] = null;
        network.setUp(i, false);
        // A quarter of the crashes also find durable frames damaged on restart (bit flip, lost write), within the
        // fault budget: on one member at a time. Two members losing the same frames at once may lose a committed
        // entry for good, and then the cluster rightly refuses to serve. A member that joined new and has not yet
        // caught up counts as one missing frames (it may not vote: see ClusterFormation), and so does one whose disk
        // is full.
        logs[i] = logs[i].afterCrash(random, random.nextInt(4) == 0 && noLogOwesFrames() && everyMemberMayElect() &&
            noDiskFull());
        crashes++;
    }

    /**
     * Crash member i; on restart its recovery finds a damaged frame at a position and cuts its log there (its
     * promise survives, apart from the data): frames lost at a chosen place, on as many members as a test likes.
     */
    void crashDamagedAt(final int i, final long position)
    {
        agents[i] = null;
        network.setUp(i, false);
        logs[i] = logs[i].afterCrash(random, false, position);
        crashes++;
    }

    /** Heal the network and empty every full disk. */
    void healAll()
    {
        network.healAll();
        for (final SimLog log : logs)
        {
            log.diskFull(false);
            log.slowDisk(0, this::nowNs);
        }
    }

    /** @return true if a frame may be damaged now: no member impaired (the fault budget, as for damage at a crash). */
    boolean mayDamageAFrame()
    {
        return noLogOwesFrames() && everyMemberMayElect() && noDiskFull();
    }

    /** @return true if no member's disk is full. */
    boolean noDiskFull()
    {
        for (final SimLog log : logs)
        {
            if (log.diskFull())
            {
                return false;
            }
        }
        return true;
    }

    /** Lose member i's data for good (log, term, vote, identity) and start it again with an empty directory. */
    void wipe(final int i)
    {
        crash(i);
        electionStates[i] = new MemoryElectionState();
        logs[i] = new SimLog(MAX_BATCH);
        start(i);
    }

    /** @return member i's durable election state. */
    MemoryElectionState electionState(final int i)
    {
        return electionStates[i];
    }

    private boolean everyMemberMayElect()
    {
        for (final MemoryElectionState state : electionStates)
        {
            if (!state.identity().mayElect())
            {
                return false;
            }
        }
        return true;
    }

    private boolean noLogOwesFrames()
    {
        for (final SimLog log : logs)
        {
            if (log.owesPromisedFrames())
            {
                return false;
            }
        }
        return true;
    }

    boolean isUp(final int i)
    {
        return null != agents[i];
    }

    ConsensusAgent agent(final int i)
    {
        return agents[i];
    }

    SimLog log(final int i)
    {
        return logs[i];
    }

    long step()
    {
        return step;
    }

    long historyEnd()
    {
        return historyEnd;
    }

    long nowNs()
    {
        return nowNs;
    }

    /**
     * One step: the clock moves up to 1 ms, every member that is up runs a duty cycle (each skips one now and then,
     * as a slow member would), the driver runs, and the invariants are checked.
     */
    void step(final boolean driverSends)
    {
        step++;
        nowNs += random.nextInt(1_000) * 1_000L;
        network.now(nowNs);
        final int offset = random.nextInt(memberCount);
        for (int k = 0; k < memberCount; k++)
        {
            final int i = (offset + k) % memberCount;
            if (null != agents[i] && random.nextInt(10) != 0)
            {
                agents[i].doWork();
            }
        }
        driver.doWork(nowNs, driverSends);
        checkInvariants();
    }

    /**
     * Step until the condition holds; fail after maxSteps.
     */
    void runUntil(final BooleanSupplier condition, final int maxSteps, final boolean driverSends, final String what)
    {
        final long deadline = step + maxSteps;
        while (!condition.getAsBoolean())
        {
            if (step > deadline)
            {
                throw violation("not reached within " + maxSteps + " steps: " + what);
            }
            step(driverSends);
        }
    }

    int leader()
    {
        int leader = -1;
        long term = -1;
        for (int i = 0; i < memberCount; i++)
        {
            if (null != agents[i] && Role.LEADER == agents[i].role() && agents[i].term() > term)
            {
                leader = i;
                term = agents[i].term();
            }
        }
        return leader;
    }

    /**
     * @return true when one leader in the highest term leads every member that is up, and all of them have
     * committed the leader's whole log.
     */
    boolean converged()
    {
        final int leader = leader();
        if (leader < 0)
        {
            return false;
        }
        final long end = logs[leader].appendedPosition();
        for (int i = 0; i < memberCount; i++)
        {
            if (null != agents[i] && (agents[i].term() > agents[leader].term() || agents[i].leaderId() != leader ||
                agents[i].commitPosition() != end || logs[i].appendedPosition() != end))
            {
                return false;
            }
        }
        return historyEnd == end;
    }

    void checkInvariants()
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
            // A member that cut its log at a damaged frame keeps its commit position (a fact it learned) and owes
            // the frames it lost up to its promise: its commit never passes what it holds or owes.
            if (commit > Math.max(logs[i].appendedPosition(), logs[i].promisedPosition()))
            {
                throw violation("member " + i + " commit " + commit + " beyond its log " + logs[i].appendedPosition() +
                    " and its promise " + logs[i].promisedPosition());
            }
            checkCommittedPrefix(i, commit);
        }
    }

    /**
     * Log time never goes back along the committed log, whatever the members' wall clocks do.
     */
    private void checkLogTime(final DirectBuffer data, final int offset, final long position)
    {
        final int type = data.getInt(offset + FrameDescriptor.TYPE_OFFSET, LITTLE_ENDIAN);
        if (LogClock.isTimestamped(data, offset, type))
        {
            final long timestamp = LogClock.timestampOf(data, offset);
            if (timestamp < historyLogTimeNs)
            {
                throw violation("log time went back at position " + position + ": " + timestamp + " after " +
                    historyLogTimeNs);
            }
            historyLogTimeNs = timestamp;
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
                checkLogTime(data, (int)p, p);
                historyIndexByPosition.put(p, historyHashes.size());
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

    /**
     * No acknowledged append is lost: each sits in the committed history at the position its ack named.
     */
    void checkAckedEntriesCommitted(final int member)
    {
        final DirectBuffer data = logs[member].buffer();
        driver.acked.forEachLong((correlationId, endPosition) ->
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

    String describe()
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
                .append(" log=").append(logs[i].appendedPosition()).append(" commit=").append(a.commitPosition())
                .append(" partition=").append(network.partitionGroup(i));
        }
        sb.append("\n  history end=").append(historyEnd).append(" acked=").append(driver.acked.size())
            .append(" sent=").append(driver.sent);
        return sb.toString();
    }

    InvariantViolation violation(final String what)
    {
        return new InvariantViolation("seed " + seed + " step " + step + ": " + what + describe());
    }
}
