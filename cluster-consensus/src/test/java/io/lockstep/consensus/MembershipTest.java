package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Raft's configuration rule (§4.1): a configuration takes effect when its entry is in the log, and becomes the durable
 * base only once committed; a cut log undoes the changes it cut. The simulations change membership rarely, one change
 * at a time, so several changes in flight at once are tested here.
 */
class MembershipTest
{
    private static final long V0 = 0b0111;
    private static final long V1 = 0b1111;
    private static final long V2 = 0b1011;
    private static final long V3 = 0b0011;

    private final MemoryElectionState store = new MemoryElectionState();
    private final Membership membership = new Membership(new ConsensusConfig().memberId(0).members(List.of(
        new Member(0, "h", 1, true), new Member(1, "h", 2, true), new Member(2, "h", 3, true),
        new Member(3, "h", 4, false))).validate(), store);

    @Test
    void theNewestChangeInTheLogRulesAndOnlyCommittedChangesBecomeTheDurableBase()
    {
        assertEquals(V0, membership.voters(), "from the configuration file");
        membership.onLogChange(100, 1, 1, V1, 0);
        membership.onLogChange(200, 1, 2, V2, 0b0100);
        membership.onLogChange(300, 1, 3, V3, 0b1100);
        assertEquals(V3, membership.voters(), "a change rules once it is in the log");
        assertEquals(0b1100, membership.learners());

        membership.onCommit(100);
        assertEquals(0, store.configVersion(), "an entry at 100 is not committed by a commit position of 100");
        membership.onCommit(200);
        assertEquals(1, store.configVersion(), "committed up to 200: the first change is the base, not the second");
        assertEquals(V1, store.voters());
        assertEquals(V3, membership.voters(), "the newest change in the log still rules");

        membership.onTruncate(300);
        assertEquals(V2, membership.voters(), "the cut change is undone");
        assertEquals(0b0100, membership.learners());
        assertEquals(2, membership.version());

        membership.onCommit(250);
        assertEquals(2, store.configVersion(), "the second change committed");
        assertEquals(V2, store.voters());
        assertEquals(0b0100, store.learners());
        membership.onTruncate(250);
        assertEquals(V2, membership.voters(), "a cut past every change keeps the committed base");
    }

    @Test
    void aChangeOlderThanTheBaseIsIgnoredAndTwoCommittedAtOnceLeaveTheNewest()
    {
        membership.onLogChange(100, 2, 1, V1, 0);
        membership.onLogChange(150, 2, 2, V2, 0);
        membership.onCommit(1000);
        assertEquals(2, store.configEpoch());
        assertEquals(2, store.configVersion(), "both committed at once: the newer is the base");
        assertEquals(V2, store.voters());
        membership.onLogChange(200, 1, 9, V3, 0);
        assertEquals(V2, membership.voters(), "an older epoch's change never rules");
    }
}
