package io.lockstep.simulation;

import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.ConsensusAgent;
import io.lockstep.consensus.ConsensusConfig;
import io.lockstep.consensus.Membership;
import io.lockstep.consensus.MemoryElectionState;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.service.ServiceHandoff;
import io.lockstep.consensus.service.ServiceMember;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.NoOpIdleStrategy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Three members running a service in one thread from a seed, with every fault the simulation knows: crashes and
 * bounces (with torn last writes, and durable frames lost on one member at a time), snapshot writes lost and
 * snapshots damaged, partitions, one-way blackholes, single-pair cuts, flapping links, and wall-clock steps. After
 * every step, members at the same applied position must hold the same state (container and service). Clients are
 * the caller's: they live on the network's client endpoints ({@link #clientTransport}) and are stepped by the caller
 * after {@link #step}.
 */
public final class SimServiceCluster
{
    /** Members of the cluster. */
    public static final int MEMBERS = 3;
    /** Simulated timeouts: short, so that a seed covers many elections in few steps. */
    static final long ELECTION_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long HEARTBEAT_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private final long seed;
    private final Random random;
    private final SimNetwork network;
    private final List<Member> members = new ArrayList<>();
    /** Members: three voting, and standbys (non-voting) after them when asked for. */
    private final int size;
    /** Members lost for good with their zone ({@link #loseZone}): no fault starts them again. */
    private final boolean[] gone;
    private boolean promoted;

    private boolean zoneLossPlanned;
    private boolean noDiskDamage;
    private int relay = -1;
    private final boolean syncStandby;
    private final SimLog[] logs;
    private final MemoryElectionState[] states;
    private final ServiceMember[] running;
    private final SimSnapshotStorage[] storages;
    private final SimWallClock[] wallClocks;
    private final Long2LongHashMap hashAtPosition = new Long2LongHashMap(Long.MIN_VALUE);
    private final Long2LongHashMap leaderOfTerm = new Long2LongHashMap(Long.MIN_VALUE);
    private final Supplier<ClusteredService> services;
    private final boolean snapshots;
    private final boolean dedicated;
    private final int keep;
    private final int egressBufferBytes;
    private long nowNs = TimeUnit.SECONDS.toNanos(1);
    private long snapshotsTaken;
    private final FaultCounts faults = new FaultCounts();

    /**
     * @param seed      the run's seed: the same seed replays the same run.
     * @param clients   client endpoints to provide.
     * @param services  makes the service (once per member start, and again when a snapshot is installed).
     * @param snapshots true to take snapshots every few KiB, purge the log and install snapshots.
     */
    public SimServiceCluster(
        final long seed, final int clients, final Supplier<ClusteredService> services, final boolean snapshots)
    {
        // Small egress buffers: the session simulation wants egress gaps to happen, and be reported.
        this(seed, clients, services, snapshots, 8 * 1024);
    }

    /**
     * @param egressBufferBytes recent egress kept per session, for resending after a failover (a member's
     *                          production bound is {@code ClusterNode.EGRESS_BUFFER_BYTES}).
     */
    public SimServiceCluster(
        final long seed, final int clients, final Supplier<ClusteredService> services, final boolean snapshots,
        final int egressBufferBytes)
    {
        this(seed, clients, services, snapshots, egressBufferBytes, 0, false);
    }

    /**
     * @param standby     add a warm standby (member 3, non-voting, running the service): it is crashed, cut off and
     *                    slowed like any member, and must hold the same state at the same positions.
     * @param syncStandby the synchronous standby option on every member (needs the standby).
     */
    public SimServiceCluster(
        final long seed, final int clients, final Supplier<ClusteredService> services, final boolean snapshots,
        final int egressBufferBytes, final boolean standby, final boolean syncStandby)
    {
        this(seed, clients, services, snapshots, egressBufferBytes, standby ? 1 : 0, syncStandby);
    }

    /**
     * @param standbys    warm standbys (members 3 and up, non-voting, running the service): they are crashed, cut
     *                    off and slowed like any member, and must hold the same state at the same positions.
     * @param syncStandby the synchronous standby option on every member (needs a standby).
     */
    public SimServiceCluster(
        final long seed, final int clients, final Supplier<ClusteredService> services, final boolean snapshots,
        final int egressBufferBytes, final int standbys, final boolean syncStandby)
    {
        this.size = MEMBERS + standbys;
        this.gone = new boolean[size];
        this.syncStandby = syncStandby;
        this.logs = new SimLog[size];
        this.states = new MemoryElectionState[size];
        this.running = new ServiceMember[size];
        this.storages = new SimSnapshotStorage[size];
        this.wallClocks = new SimWallClock[size];
        this.egressBufferBytes = egressBufferBytes;
        this.seed = seed;
        this.random = new Random(seed);
        this.services = services;
        this.snapshots = snapshots;
        this.dedicated = dedicated(seed);
        this.keep = 1 + random.nextInt(2);
        final int[] endpoints = new int[size + clients];
        for (int i = 0; i < size; i++)
        {
            endpoints[i] = i;
            members.add(new Member(i, "sim", 0, i < MEMBERS));
            logs[i] = new SimLog(64 * 1024);
            wallClocks[i] = new SimWallClock(() -> nowNs, random);
            states[i] = new MemoryElectionState();
            storages[i] = new SimSnapshotStorage(random);
        }
        for (int c = 0; c < clients; c++)
        {
            endpoints[size + c] = Transport.CLIENT_ENDPOINT_BASE + c;
        }
        network = new SimNetwork(random, endpoints, TimeUnit.MICROSECONDS.toNanos(50),
            TimeUnit.MILLISECONDS.toNanos(3), TimeUnit.MILLISECONDS.toNanos(100));
        network.now(nowNs);
        for (int i = 0; i < size; i++)
        {
            start(i);
        }
    }

    /**
     * Odd seeds run every member in the DEDICATED threading mode, even ones SHARED; {@code -Dlockstep.sim.threading}
     * = {@code shared} or {@code dedicated} runs all seeds in one mode. In DEDICATED mode each member's service agent
     * runs 0-2 times after each of its consensus duty cycles, as the seed decides: the service thread running ahead,
     * behind, or in step.
     */
    static boolean dedicated(final long seed)
    {
        final String mode = System.getProperty("lockstep.sim.threading", "mixed");
        return switch (mode)
        {
            case "shared" -> false;
            case "dedicated" -> true;
            default -> (seed & 1) == 1;
        };
    }

    /** A replay bound from 64 bytes (every record its own cycle) to 64 KiB (the default), as the seed decides. */
    private ServiceHandoff newHandoff()
    {
        return new ServiceHandoff(false).replayBudgetBytes(64 << random.nextInt(11));
    }

    /**
     * @return true if this run's members run in the DEDICATED threading mode.
     */
    public boolean isDedicated()
    {
        return dedicated;
    }

    /**
     * @return the run's randomness, for the caller's clients (so that one seed drives everything).
     */
    public Random random()
    {
        return random;
    }

    public long seed()
    {
        return seed;
    }

    public long nowNs()
    {
        return nowNs;
    }

    /**
     * @return a transport for client number {@code c}.
     */
    public Transport clientTransport(final int c)
    {
        return network.transportFor(Transport.CLIENT_ENDPOINT_BASE + c);
    }

    /**
     * @return member ids, for clients to try.
     */
    public int[] memberIds()
    {
        final int[] ids = new int[size];
        for (int i = 0; i < size; i++)
        {
            ids[i] = i;
        }
        return ids;
    }

    /**
     * @return member i's running service member, or null while it is down.
     */
    public ServiceMember member(final int i)
    {
        return running[i];
    }

    /**
     * @return member i's service, cast to the type the factory makes.
     */
    @SuppressWarnings("unchecked")
    public <T extends ClusteredService> T service(final int i)
    {
        return (T)running[i].service();
    }

    public SimSnapshotStorage storage(final int i)
    {
        return storages[i];
    }

    /** @return member i's newest durable snapshot's log position, or -1 with none. */
    public long snapshotPosition(final int i)
    {
        return storages[i].durablePosition();
    }

    /** @return snapshots member i was sent by a leader and installed, over the run. */
    public int snapshotsInstalled(final int i)
    {
        return storages[i].installsCompleted;
    }

    public SimLog log(final int i)
    {
        return logs[i];
    }

    public long snapshotsTaken()
    {
        long total = snapshotsTaken;
        for (final ServiceMember member : running)
        {
            total += null == member ? 0 : member.snapshotsTaken();
        }
        return total;
    }

    void start(final int i)
    {
        network.setUp(i, true);
        final ConsensusConfig config = new ConsensusConfig().memberId(i).members(members)
            .timeouts(ELECTION_TIMEOUT_NS, HEARTBEAT_NS).maxBlockBytes(16 * 1024).maxInFlightBytes(64 * 1024)
            .maxPendingClientAppends(1024).syncStandby(syncStandby).relay(relay);
        final Transport transport = network.transportFor(i);
        final ConsensusAgent consensus = new ConsensusAgent(config, () -> nowNs, wallClocks[i], transport, logs[i],
            states[i], new Random(random.nextLong()));
        if (snapshots)
        {
            // Snapshots every few KiB and purge units of 4 KiB: members crashed for a while need an install.
            running[i] = new ServiceMember(consensus, transport, logs[i], services, storages[i],
                new ServiceMember.SnapshotSettings(4096 + random.nextInt(8192), keep, () -> 0),
                TimeUnit.SECONDS.toNanos(30), 64, egressBufferBytes, 64, new NoOpIdleStrategy(),
                dedicated ? newHandoff() : null);
        }
        else
        {
            running[i] = new ServiceMember(consensus, transport, logs[i], services, null,
                new ServiceMember.SnapshotSettings(0, 1, () -> 0), TimeUnit.SECONDS.toNanos(30), 64,
                egressBufferBytes, 64, new NoOpIdleStrategy(), dedicated ? newHandoff() : null);
        }
        // Seeded: a session secret is the one random choice a leader writes into the log.
        running[i].sessionSecrets(new Random(random.nextLong()));
    }

    void crash(final int i)
    {
        snapshotsTaken += running[i].snapshotsTaken();
        running[i] = null;
        network.setUp(i, false);
        // A quarter of the crashes also find durable frames damaged on restart (bit flip, lost write), on one
        // member at a time (the fault budget: see SimCluster.crash).
        // A member that joined new and has not yet caught up counts as one missing frames (see ClusterFormation), and
        // so does one whose disk is full (what it holds unwritten it may lose).
        boolean otherOwes = false;
        for (int j = 0; j < logs.length; j++)
        {
            otherOwes |= logs[j].owesPromisedFrames() || logs[j].diskFull() ||
                (null != states[j] && !states[j].identity().mayElect());
        }
        // With a zone loss planned the standbys are the only copies left, so they are spared this fault (it is a
        // second failure beyond the zone's loss, which no replication scheme survives).
        final boolean spared = noDiskDamage || (zoneLossPlanned && i >= MEMBERS);
        final long damagedBefore = logs[i].damagedCuts;
        logs[i] = logs[i].afterCrash(random, random.nextInt(4) == 0 && !otherOwes && !spared);
        storages[i] = storages[i].afterCrash();
        // Counted where it happened: a crash asked to damage a log with nothing durable damages nothing.
        faults.diskDamage += logs[i].damagedCuts - damagedBefore;
        if (keep > 1 && storages[i].count() > 1 && random.nextInt(4) == 0)
        {
            // The newest snapshot rots while the member is down: it must fall back to the one before.
            storages[i].corruptNewest(logs[i].startPosition());
            faults.rottenSnapshots++;
        }
    }

    /** @return the faults this run has injected so far, by class. */
    public FaultCounts faults()
    {
        return faults;
    }

    /**
     * Heal the network and start every member that is down: the cluster must now converge.
     */
    public void healAndStartAll()
    {
        healAll();
        for (int i = 0; i < size; i++)
        {
            if (null == running[i] && !gone[i])
            {
                start(i);
            }
        }
    }

    /**
     * The first standby feeds the others ({@code ConsensusConfig#relay}) on every member from its next start; call
     * before stepping.
     */
    public void relayThroughFirstStandby()
    {
        relay = MEMBERS;
        for (int i = 0; i < size; i++)
        {
            crash(i);
            start(i);
        }
    }

    /**
     * From now on no crash loses durable frames (the other faults stay). For membership changes: a member that lost
     * frames it acknowledged waits for a leader to send them again, and when the newest entries sit only on
     * non-voting members no voter can be that leader: a liveness limit of the rule, not a safety one.
     */
    public void noDiskDamage()
    {
        noDiskDamage = true;
    }

    /**
     * A zone loss will come ({@link #loseZone}): from now on the standbys never lose durable frames in a crash.
     */
    public void planZoneLoss()
    {
        zoneLossPlanned = true;
    }

    /**
     * The primary zone is lost for good: every voting member of the seed configuration crashes and no fault starts
     * it again (until {@link #returnZone}).
     */
    public void loseZone()
    {
        for (int i = 0; i < MEMBERS; i++)
        {
            if (null != running[i])
            {
                crash(i);
            }
            gone[i] = true;
        }
    }

    /**
     * What {@code tool promote} does: the most up-to-date standby that is up adopts the next membership epoch, in
     * which the standbys vote and the old voters are removed; the others learn it from that one (ConfigurationNotice)
     * as it stands for election, and vote for it, since no log among them is ahead of its.
     *
     * @return the standby promoted.
     */
    public int promoteStandbys()
    {
        long voters = 0;
        long epoch = 0;
        int best = -1;
        for (int i = MEMBERS; i < size; i++)
        {
            voters |= 1L << i;
            if (null != running[i])
            {
                final ConsensusAgent a = running[i].consensus();
                epoch = Math.max(epoch, a.membership().epoch());
                final ConsensusAgent b = best < 0 ? null : running[best].consensus();
                if (null == b || a.lastLogTerm() > b.lastLogTerm() ||
                    (a.lastLogTerm() == b.lastLogTerm() && logs[i].pendingPosition() > logs[best].pendingPosition()))
                {
                    best = i;
                }
            }
        }
        if (best < 0)
        {
            throw new AssertionError("seed " + seed + ": no standby up to promote");
        }
        promoted = true;
        hashAtPosition.clear();
        final String refusal = running[best].consensus().membershipExchange().promote(epoch + 1, voters, 0);
        if (null != refusal)
        {
            throw new AssertionError("seed " + seed + ": standby " + best + " refused promotion: " + refusal);
        }
        return best;
    }

    /**
     * After a promotion the old zone's members, and a standby that was away and applied more of the old history than
     * the promoted cluster holds, hold another history: only the promoted leader and members whose applied history
     * a leader of the promoted epoch has confirmed are compared.
     */
    private boolean onPromotedHistory(final int i)
    {
        final ConsensusAgent a = running[i].consensus();
        return i >= MEMBERS && null == a.membershipExchange().removedReason() &&
            (Role.LEADER == a.role() || a.membershipExchange().onCurrentHistory());
    }

    /**
     * The old primary zone comes back, with the logs its members had: each must learn it was removed, and never
     * lead or commit again.
     */
    public void returnZone()
    {
        for (int i = 0; i < MEMBERS; i++)
        {
            gone[i] = false;
            if (null == running[i])
            {
                start(i);
            }
        }
    }

    /** @return the membership of a member that leads now, or null if none does. */
    public Membership leaderMembership()
    {
        for (int i = 0; i < size; i++)
        {
            if (null != running[i] && Role.LEADER == running[i].consensus().role())
            {
                return running[i].consensus().membership();
            }
        }
        return null;
    }

    /**
     * What an operator does before adding back a member that was removed: wipe its data (log, term, vote,
     * snapshots) and start it again.
     */
    public void wipe(final int i)
    {
        running[i] = null;
        logs[i] = new SimLog(64 * 1024);
        states[i] = new MemoryElectionState();
        storages[i] = new SimSnapshotStorage(random);
        if (!gone[i])
        {
            start(i);
        }
    }

    /** @return true if member i takes no part in the current configuration (removed by a promotion). */
    public boolean removed(final int i)
    {
        return null != running[i] && null != running[i].consensus().membershipExchange().removedReason();
    }

    /**
     * One step: time moves up to 1 ms, a fault now and then, every member that is up runs a duty cycle (in an
     * order that varies), and members at the same applied position are checked to hold the same state.
     */
    public void step(final boolean faults)
    {
        nowNs += random.nextInt(1_000) * 1_000L;
        network.now(nowNs);
        if (faults)
        {
            injectFault();
        }
        for (int k = 0; k < size; k++)
        {
            final int i = (k + (int)(nowNs % size)) % size;
            if (null != running[i])
            {
                storages[i].tick();
                running[i].doWork();
                if (dedicated)
                {
                    for (int n = random.nextInt(3); n > 0; n--)
                    {
                        running[i].serviceAgent().doWork();
                    }
                }
                checkOneLeaderPerTerm(i);
                if (!promoted || onPromotedHistory(i))
                {
                    checkSameStateAtSamePosition(i);
                }
            }
        }
    }

    private void injectFault()
    {
        final int roll = random.nextInt(1000);
        final int i = random.nextInt(size);
        if (roll < 3 && null != running[i])
        {
            crash(i);
            faults.crashes++;
        }
        else if (roll < 6 && null != running[i])
        {
            crash(i);
            start(i);
            faults.crashes++;
            faults.restarts++;
        }
        else if (roll < 16 && null == running[i] && !gone[i])
        {
            start(i);
            faults.restarts++;
        }
        else if (roll < 19)
        {
            network.partition(i, 1);
            faults.partitions++;
        }
        else if (roll < 21)
        {
            wallClocks[i].step(random);
            faults.clockSteps++;
        }
        else if (roll < 24)
        {
            // One-way blackhole, a cut between one pair, or a flapping link (SimNetwork).
            final int j = (i + 1 + random.nextInt(size - 1)) % size;
            switch (roll % 3)
            {
                case 0 -> network.blackhole(i, j);
                case 1 -> network.cut(i, j);
                default -> network.flap(i, j);
            }
            faults.brokenLinks++;
        }
        else if (roll < 29)
        {
            healAll();
            faults.heals++;
        }
        else if (roll < 31 && !zoneLossPlanned && noDiskFull())
        {
            // One member's disk fills (one at a time: the fault budget, as for damage): it can neither write its log
            // nor a snapshot until the next heal empties it.
            logs[i].diskFull(true);
            storages[i].diskFull(true);
            faults.fullDisks++;
        }
        else if (roll < 33 && !logs[i].slowDisk())
        {
            // One member's log syncs slowly until the next heal: from a fraction of an election timeout per sync to
            // several, when a leader hands over.
            logs[i].slowDisk((1 + random.nextInt(8)) * ELECTION_TIMEOUT_NS / 2, this::nowNs);
            faults.slowDisks++;
        }
        else if (roll < 35 && null != running[i] && Role.LEADER != running[i].consensus().role() && !zoneLossPlanned &&
            !noDiskDamage && nothingImpaired() && logs[i].damageFrame(random) >= 0)
        {
            // A durable frame damaged while a follower runs, found by a reader (its service): repaired from the
            // leader without stopping. One impaired member at a time, as for damage. Not on a leader here: one that
            // crashes while handing over with the damage still held, beside another member that crashed owing the
            // uncommitted entries it had cut for a conflict, leaves two members owing frames, which only
            // protocol-aware recovery could tell were never committed (the cluster simulation covers leaders).
            faults.damagedFrames++;
        }
    }

    private boolean nothingImpaired()
    {
        for (int j = 0; j < logs.length; j++)
        {
            if (logs[j].owesPromisedFrames() || logs[j].diskFull() || (null != states[j] &&
                !states[j].identity().mayElect()))
            {
                return false;
            }
        }
        return true;
    }

    private boolean noDiskFull()
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

    private void healAll()
    {
        network.healAll();
        for (int j = 0; j < size; j++)
        {
            logs[j].diskFull(false);
            logs[j].slowDisk(0, this::nowNs);
            storages[j].diskFull(false);
        }
    }

    /** Election safety: at most one leader per term, whatever the membership changes did. */
    private void checkOneLeaderPerTerm(final int i)
    {
        final ConsensusAgent a = running[i].consensus();
        if (Role.LEADER == a.role())
        {
            final long seen = leaderOfTerm.get(a.term());
            if (Long.MIN_VALUE == seen)
            {
                leaderOfTerm.put(a.term(), i);
            }
            else if (seen != i)
            {
                throw new AssertionError("seed " + seed + ": members " + seen + " and " + i + " both led term " +
                    a.term() + describe());
            }
        }
    }

    private void checkSameStateAtSamePosition(final int i)
    {
        final long position = running[i].hashedPosition();
        if (position < 0)
        {
            return;
        }
        final long hash = running[i].stateHash();
        final long seen = hashAtPosition.get(position);
        if (Long.MIN_VALUE == seen)
        {
            hashAtPosition.put(position, hash);

        }
        else if (seen != hash)
        {
            throw new AssertionError("seed " + seed + ": member " + i + " holds other state at position " + position
                + describe());
        }
    }

    /**
     * @return true if every member (lost and removed ones aside) is up and has applied up to the same position.
     */
    public boolean membersAgree()
    {
        long position = -1;
        final Membership current = leaderMembership();
        for (int i = 0; i < size; i++)
        {
            if (gone[i] || removed(i) || (null != current && !current.isMember(i)))
            {
                // Lost, stopped, or no longer in the leader's configuration: nothing to catch up with.
                continue;
            }
            if (null == running[i])
            {
                return false;
            }
            final long p = running[i].container().appliedPosition();
            if (position >= 0 && p != position)
            {
                return false;
            }
            position = p;
        }
        return true;
    }

    /**
     * @return each member's role, term, log, commit, applied position and snapshot, for a failure message.
     */
    public String describe()
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < size; i++)
        {
            if (null == running[i])
            {
                sb.append("\n  member ").append(i).append(": down");
                continue;
            }
            final ConsensusAgent a = running[i].consensus();
            sb.append("\n  member ").append(i).append(": ").append(a.role()).append(" term=").append(a.term())
                .append(" leader=").append(a.leaderId()).append(" log=[").append(logs[i].startPosition())
                .append(", ").append(logs[i].appendedPosition()).append(") commit=").append(a.commitPosition())
                .append(" applied=").append(running[i].container().appliedPosition())
                .append(" snapshot=").append(storages[i].durablePosition())
                .append(" installs=").append(storages[i].installsCompleted)
                .append(" membership ").append(a.membership().describe())
                .append(null == a.membershipExchange().removedReason() ? "" :
                    " stopped: " + a.membershipExchange().removedReason());
        }
        return sb.toString();
    }
}
