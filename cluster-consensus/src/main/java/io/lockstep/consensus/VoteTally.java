package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;

/**
 * A candidate's count of the votes for it, in its pre-vote or its election: which members granted one, as a bitmask
 * of member ids (at most 64 members, as {@link Membership}). A vote counts only in the phase and term it was asked in.
 * Refusals of the election (not the pre-vote) are counted too, to tell a split vote early ({@link #refuse}).
 */
final class VoteTally
{
    private long votes;
    private long refusals;
    private boolean preVotePhase;
    /** A split vote was settled early since a leader was last heard: the next waits out its timeout. */
    private boolean fastRetryUsed;

    /** A new phase: only this member's own vote so far. */
    void start(final int selfId, final boolean preVote)
    {
        votes = 1L << selfId;
        refusals = 0;
        preVotePhase = preVote;
    }

    /**
     * Note a refusal of the election under way (refused pre-votes are not counted: a pre-vote that cannot win waits
     * out its timeout, so that a member cut off from a live leader does not keep asking).
     *
     * @param voterId      who refused.
     * @param preVote      true if it answers a pre-vote request.
     * @param askedTerm    the term it was refused for.
     * @param expectedTerm the term of the election under way.
     * @param voters       the voters, as a bitmask of member ids.
     * @param quorum       votes needed.
     * @param transport    whether this member's connection to a voter is up: a voter without one cannot answer
     *                     before the candidate's timeout (in a failover, the dead leader).
     * @return true if this refusal settles it: the votes granted, with those of the connected voters that have not
     * answered yet, fall short of a quorum (a split vote), and no split vote was settled early since a leader was
     * last heard ({@link #onLeaderHeard}). A voter that is slow to answer keeps the election open. Once per leaderless
     * stretch: two candidates that retry within one heartbeat interval of each other split again when a round trip
     * between them is about that long; the randomised election timeout spreads them wider.
     */
    boolean refuse(final int voterId, final boolean preVote, final long askedTerm, final long expectedTerm,
        final long voters, final int quorum, final Transport transport)
    {
        if (preVote || preVotePhase || askedTerm != expectedTerm || 0 != (refusals & (1L << voterId)))
        {
            return false;
        }
        refusals |= 1L << voterId;
        int mayWin = Long.bitCount(votes & voters);
        for (long unanswered = voters & ~votes & ~refusals; 0 != unanswered; unanswered &= unanswered - 1)
        {
            mayWin += transport.isConnected(Long.numberOfTrailingZeros(unanswered)) ? 1 : 0;
        }
        if (mayWin >= quorum || fastRetryUsed)
        {
            return false;
        }
        fastRetryUsed = true;
        return true;
    }

    /** A leader was heard from, or this member leads: a later split vote may be settled early again. */
    void onLeaderHeard()
    {
        fastRetryUsed = false;
    }

    /**
     * Count a granted vote if it answers the phase under way.
     *
     * @param voterId      who granted it.
     * @param preVote      true if it answers a pre-vote request.
     * @param askedTerm    the term it was granted for.
     * @param expectedTerm the term this phase asked for (term + 1 in a pre-vote, term in an election).
     * @param quorum       votes needed.
     * @return true if the vote completed a quorum.
     */
    boolean count(final int voterId, final boolean preVote, final long askedTerm, final long expectedTerm,
        final int quorum)
    {
        if (preVote != preVotePhase || askedTerm != expectedTerm)
        {
            return false;
        }
        votes |= 1L << voterId;
        return won(quorum);
    }

    /** @return true if the votes so far make a quorum. */
    boolean won(final int quorum)
    {
        return Long.bitCount(votes) >= quorum;
    }
}
