package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;
import io.lockstep.simulation.SimLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When a member with an empty data directory may vote, and how the cluster identity is taken, sealed and defended.
 */
class ClusterFormationTest
{
    private static final long X_HIGH = 0x1111L;
    private static final long X_LOW = 0x2222L;
    private static final long Y_HIGH = 0x3333L;
    private static final long Y_LOW = 0x4444L;

    private final MemoryElectionState store = new MemoryElectionState();
    private final SimLog log = new SimLog(64 * 1024);
    private final TermIndex termIndex = new TermIndex();
    private final MemberErrors errors = new MemberErrors(() -> 0L, new MemberMetrics());
    private final List<Member> members = List.of(
        new Member(0, "h", 1, true), new Member(1, "h", 2, true), new Member(2, "h", 3, true));

    private ClusterFormation formation()
    {
        final ConsensusConfig config = ConsensusConfig.of(2, members, TimeoutProfile.LAN);
        return new ClusterFormation(2, store, log, new Membership(config, store), errors);
    }

    @Test
    void aNewMemberMayNotVoteUntilEveryVoterAnswersThatItIsNewToo()
    {
        final ClusterFormation formation = formation();
        assertFalse(formation.mayElect());
        formation.onAnswer(0, 0, true);
        assertFalse(formation.mayElect(), "one of two voters answered");
        formation.onAnswer(0, 0, true);
        assertFalse(formation.mayElect(), "the same voter again");
        formation.onAnswer(1, 0, true);
        assertTrue(formation.mayElect(), "every other voter is new: the cluster forms");
        assertTrue(store.identity().mayElect(), "durable: a restart does not ask again");
        assertTrue(formation().mayElect());
    }

    @Test
    void aVoterAtATermMeansAClusterHasFormedAndTheNewMemberWaitsForItsLeader()
    {
        final ClusterFormation formation = formation();
        formation.onAnswer(0, 4, true);
        formation.onAnswer(1, 0, true);
        assertFalse(formation.mayElect(), "member 0 has held a term: this member may have been wiped");
        assertFalse(store.identity().mayElect());
    }

    @Test
    void votersThatMayNotVoteEitherCountAsNewSoRestoredMembersFormAgain()
    {
        final ClusterFormation formation = formation();
        formation.onAnswer(0, 7, false);
        assertFalse(formation.mayElect());
        formation.onAnswer(1, 7, true);
        assertFalse(formation.mayElect(), "member 1 may vote: its data may hold what this member lost");
        final ClusterFormation again = formation();
        again.onAnswer(0, 7, false);
        again.onAnswer(1, 7, false);
        assertTrue(again.mayElect(), "no member holds data to trust: they form again from what they have");
    }

    @Test
    void aJoinerTakesItsLeadersIdentityAndVotesOnceItHoldsACommitOfTheLeadersTerm()
    {
        final ClusterFormation formation = formation();
        assertTrue(formation.acceptLeader(X_HIGH, X_LOW, 3, 0));
        assertEquals(X_HIGH, store.identity().high(), "taken from the first append, durably");
        assertEquals(X_LOW, store.identity().low());

        // A frame of an older term, then two of the leader's term.
        append(2);
        final long termStart = append(3);
        append(3);
        final long end = log.pendingPosition();
        formation.onCommit(termStart, 3, termIndex);
        assertFalse(formation.mayElect(), "a commit that does not cover the leader's own term says too little");
        formation.onCommit(end + 1, 3, termIndex);
        assertFalse(formation.mayElect(), "it does not yet hold the log up to the commit");
        formation.onCommit(end, 3, termIndex);
        assertTrue(formation.mayElect());
        assertTrue(store.identity().sealed(), "an entry committed under the identity seals it");
    }

    @Test
    void aSealedMemberRefusesALeaderOfAnotherClusterAndAnUnsealedOneTakesTheNewerLeaders()
    {
        store.saveIdentity(new ClusterIdentity(X_HIGH, X_LOW, true, false));
        final ClusterFormation unsealed = formation();
        assertTrue(unsealed.acceptLeader(Y_HIGH, Y_LOW, 5, 1), "nothing committed under X yet: Y is taken");
        assertEquals(Y_HIGH, store.identity().high());

        store.saveIdentity(new ClusterIdentity(X_HIGH, X_LOW, true, true));
        final ClusterFormation sealed = formation();
        assertFalse(sealed.acceptLeader(Y_HIGH, Y_LOW, 6, 1));
        assertEquals(X_HIGH, store.identity().high(), "kept");
        assertEquals(1, errors.total());
        assertTrue(sealed.acceptLeader(X_HIGH, X_LOW, 6, 1));
        assertFalse(sealed.acceptLeader(0, 0, 6, 1), "a leader that names no cluster is refused once sealed");
        assertFalse(sealed.acceptLeader(Long.MIN_VALUE, 0, 6, 1), "as is one whose fields are absent");
        assertEquals(3, errors.total());
        assertTrue(unsealed.acceptLeader(0, 0, 6, 1), "a member not yet sealed follows a leader that names none");
    }

    @Test
    void theFirstLeaderMakesTheIdentityAndALaterOneKeepsIt()
    {
        store.saveIdentity(ClusterIdentity.FORMED_BEFORE_IDENTITIES);
        final ClusterFormation formation = formation();
        formation.onLeading(X_HIGH, X_LOW);
        assertEquals(new ClusterIdentity(X_HIGH, X_LOW, true, false), store.identity());
        formation.onLeading(Y_HIGH, Y_LOW);
        assertEquals(X_HIGH, store.identity().high(), "made once");
    }

    @Test
    void aPromotionThatMakesThisMemberAVoterLetsItVote()
    {
        final ClusterFormation formation = formation();
        formation.onPromoted();
        assertTrue(formation.mayElect(), "member 2 is a voter of the configuration it adopted");
    }

    private long append(final long term)
    {
        final long start = log.pendingPosition();
        final UnsafeBuffer entry = new UnsafeBuffer(new byte[32]);
        assertTrue(log.append(term, LogEntryType.NEW_LEADERSHIP_TERM, entry, 0, entry.capacity()) > start);
        termIndex.onFrame(term, start);
        return start;
    }
}
