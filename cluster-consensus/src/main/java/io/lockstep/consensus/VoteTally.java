package io.lockstep.consensus;

/**
 * A candidate's count of the votes for it, in its pre-vote or its election: which members granted one, as a bitmask
 * of member ids (at most 64 members, as {@link Membership}). A vote counts only in the phase and term it was asked in.
 */
final class VoteTally
{
    private long votes;
    private boolean preVotePhase;

    /** A new phase: only this member's own vote so far. */
    void start(final int selfId, final boolean preVote)
    {
        votes = 1L << selfId;
        preVotePhase = preVote;
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
