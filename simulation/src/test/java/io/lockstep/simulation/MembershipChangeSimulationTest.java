package io.lockstep.simulation;

import io.lockstep.consensus.Membership;
import io.lockstep.consensus.codecs.MembershipAction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.logging.Level;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Membership changes at runtime under the simulation's faults: five configured members (three voting, two not), a
 * tool asking the leader for a random change every few hundred steps (add a non-voting member, promote one, remove
 * a voter or a non-voting member, the leader included, never below three voters), as ops replace machines, while
 * members crash, partitions
 * come and go, and three clients send (no durable frames lost in crashes here: see
 * {@link SimServiceCluster#noDiskDamage()}). A member that was removed is wiped before it is added back, as the README
 * tells operators to. Checked on every seed: one leader per term (throughout), the same state at the same
 * positions (throughout), every client message applied once, in order, and at the end the members of the
 * configuration agreeing. Seeds: {@code -Dlockstep.membership.seeds=N} (default 100).
 */
class MembershipChangeSimulationTest
{
    private static final int CLIENTS = 3;
    private static final int TOOL = CLIENTS;

    @BeforeAll
    static void quietLogs()
    {
        Logger.getLogger("io.lockstep").setLevel(Level.parse(System.getProperty("lockstep.membership.log", "OFF")));
    }

    @Test
    void membershipChangesUnderFaultsKeepOneLeaderPerTermAndEveryCommittedEntry()
    {
        final int seeds = Integer.getInteger("lockstep.membership.seeds", 100);
        final long[] totals = new long[2];
        for (long seed = 1; seed <= seeds; seed++)
        {
            try
            {
                final long[] run = runOne(seed);
                totals[0] += run[0];
                totals[1] += run[1];
            }
            catch (final Throwable t)
            {
                final long failedSeed = seed;
                throw new AssertionError("membership simulation failed at seed " + seed + " (" +
                    SeedReplay.again(() -> runOne(failedSeed)) + ")", t);
            }
        }
        System.out.printf("membership simulation: %d seeds, %d changes asked for, %d taken by a leader, one leader " +
            "per " +
            "term, every message applied once%n", seeds, totals[0], totals[1]);
    }

    private static long[] runOne(final long seed)
    {
        final SimServiceCluster cluster = new SimServiceCluster(seed, CLIENTS + 1,
            ZoneLossSimulationTest.SequenceService::new, seed % 3 == 0, 8 * 1024, 2, false);
        cluster.noDiskDamage();
        final ZoneLossSimulationTest.Sender[] senders = new ZoneLossSimulationTest.Sender[CLIENTS];
        for (int c = 0; c < CLIENTS; c++)
        {
            senders[c] = new ZoneLossSimulationTest.Sender(cluster, c);
        }
        final SimTool tool = new SimTool(cluster, TOOL);
        long asked = 0;
        long lastVersion = 0;
        long committed = 0;
        for (int s = 0; s < 8000; s++)
        {
            step(cluster, senders, tool, s < 6000, true);
            if (s % 300 == 150)
            {
                asked += askForAChange(cluster, tool) ? 1 : 0;
            }
            final Membership m = cluster.leaderMembership();
            if (null != m && m.version() > lastVersion)
            {
                committed += m.version() - lastVersion;
                lastVersion = m.version();
            }
        }
        cluster.healAndStartAll();
        int s = 0;
        while (!(cluster.membersAgree() && ZoneLossSimulationTest.idleAll(senders)
            && null != cluster.leaderMembership()))
        {
            assertTrue(++s < 60_000, "seed " + seed + ": did not settle" + cluster.describe() +
                " leader membership " + (null == cluster.leaderMembership() ? "none" :
                cluster.leaderMembership().describe()) + ZoneLossSimulationTest.describe(senders));
            step(cluster, senders, tool, false, false);
        }
        for (final ZoneLossSimulationTest.Sender sender : senders)
        {
            assertEquals(0, sender.lostAcknowledged, "seed " + seed + ": acknowledged messages lost");
            assertEquals(0, sender.sessionsClosedByCluster, "seed " + seed + ": a session was lost");
        }
        return new long[]{ asked, committed };
    }

    /**
     * Pick a change that makes sense for the leader's configuration and send it, as {@code tool add-member},
     * {@code promote-member} or {@code remove-member} would.
     */
    private static boolean askForAChange(final SimServiceCluster cluster, final SimTool tool)
    {
        final int leader = tool.leader();
        if (leader < 0)
        {
            return false;
        }
        final Membership m = cluster.member(leader).consensus().membership();
        final int id = cluster.random().nextInt(cluster.memberIds().length);
        final MembershipAction action;
        if (!m.isMember(id))
        {
            if (cluster.removed(id) || null == cluster.member(id))
            {
                cluster.wipe(id);
            }
            action = MembershipAction.ADD_LEARNER;
        }
        else if (m.isLearner(id))
        {
            action = Long.bitCount(m.voters()) < 5 ? MembershipAction.PROMOTE : MembershipAction.REMOVE;
        }
        else
        {
            // Never below three voters: the simulation's faults are budgeted for a majority of three; ops replace
            // a machine by adding one before removing one.
            if (Long.bitCount(m.voters()) < 4)
            {
                return false;
            }
            action = MembershipAction.REMOVE;
        }
        return tool.ask(action, id);
    }

    private static void step(
        final SimServiceCluster cluster, final ZoneLossSimulationTest.Sender[] senders, final SimTool tool,
        final boolean faults, final boolean send)
    {
        cluster.step(faults);
        for (final ZoneLossSimulationTest.Sender sender : senders)
        {
            sender.step(send);
        }
        tool.poll();
    }
}
