package io.lockstep.consensus;

/**
 * The current term and the vote cast in it, the membership epoch the member has adopted and the cluster identity it
 * holds: durable before any message that depends on them is sent (Raft §5.2; a member must not forget that it was
 * promoted, or removed).
 */
public interface ElectionStateStore
{
    /** No vote cast in the current term. */
    int NO_VOTE = -1;
    /**
     * A vote may have been cast in the current term, for whom is not known: a restored backup's. The member votes
     * for no one in that term (it may have voted already, before its data was replaced), and as usual in later ones.
     */
    int VOTE_UNKNOWN = -2;

    long term();

    int votedFor();

    /**
     * Make the pair durable; returns only once it is.
     */
    void save(long term, int votedFor);

    /** @return the adopted membership epoch; 0 (with no sets) means the one the configuration file seeds. */
    long configEpoch();

    /** @return membership changes committed within the epoch (MembershipChange entries). */
    long configVersion();

    /** @return bit set of voting member ids in the adopted epoch (0 while on the seed). */
    long voters();

    /** @return bit set of non-voting member ids in the adopted epoch. */
    long learners();

    /**
     * Make a newer committed membership durable (term and vote are kept); returns only once it is.
     */
    void saveMembership(long configEpoch, long configVersion, long voters, long learners);

    /** @return the cluster identity this member's data holds ({@link ClusterIdentity#NONE} for a new member). */
    ClusterIdentity identity();

    /**
     * Make the member's cluster identity durable (term, vote and membership are kept); returns only once it is.
     */
    void saveIdentity(ClusterIdentity identity);
}
