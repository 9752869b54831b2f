package io.lockstep.consensus;

/**
 * What a member's data says about the cluster it belongs to: the cluster's identity (made by its first leader and
 * carried in every append), whether the member may take part in elections, and whether the identity is sealed.
 * See {@link ClusterFormation} for the rules.
 *
 * @param high     high half of the identity; with {@code low}, 0 and 0 mean none known yet.
 * @param low      low half of the identity.
 * @param mayElect the member's data can be trusted in elections: it formed the cluster with every other configured
 *                 member, or it has caught up with a leader's committed log since it joined with an empty directory.
 * @param sealed   the member has seen an entry committed under this identity, so the identity never changes again.
 */
public record ClusterIdentity(long high, long low, boolean mayElect, boolean sealed)
{
    /** A new member's: no identity, and it may not vote or stand. */
    public static final ClusterIdentity NONE = new ClusterIdentity(0, 0, false, false);

    /**
     * What a data directory written before cluster identities reads as, and what a restored backup holds: its
     * member took part in a cluster (the backup: holds what the cluster had committed), so it takes part in
     * elections, and takes the identity its next leader sends, or makes one as leader.
     */
    public static final ClusterIdentity FORMED_BEFORE_IDENTITIES = new ClusterIdentity(0, 0, true, false);

    /** @return true once an identity is known. */
    public boolean known()
    {
        return isIdentity(high, low);
    }

    /** @return true if the pair names a cluster: not 0 and 0, and not an older sender's absent field. */
    public static boolean isIdentity(final long high, final long low)
    {
        return (0 != high || 0 != low) && Long.MIN_VALUE != high;
    }

    /** @return the identity as 32 hex digits, or "none". */
    public String text()
    {
        return known() ? toText(high, low) : "none";
    }

    static String toText(final long high, final long low)
    {
        return String.format("%016x%016x", high, low);
    }
}
