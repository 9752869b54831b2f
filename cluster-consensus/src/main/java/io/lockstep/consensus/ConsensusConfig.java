package io.lockstep.consensus;

import io.lockstep.cluster.transport.Member;

import java.util.List;

/**
 * What a consensus agent needs to know: who it is, who the others are, and its bounds and timings. Set fluently, as
 * every Lockstep configuration is ({@code new ConsensusConfig().memberId(0).members(list).timeouts(LAN)}); checked
 * as a whole by {@link #validate()}, which the agent calls when it is made. Validated, it is frozen: an agent reads
 * its bounds on every duty cycle, so a setter called after that throws rather than change a running member.
 */
public final class ConsensusConfig
{
    /** Members are tracked in bit sets of a long. */
    public static final int MAX_MEMBERS = 63;

    /** Default bound on log bytes in one append request. */
    public static final int DEFAULT_MAX_BLOCK_BYTES = 256 * 1024;
    /** Default bound on log bytes sent to a follower and not yet acknowledged. */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 4L * 1024 * 1024;
    /** Default bound on driver appends waiting for commit. */
    public static final int DEFAULT_MAX_PENDING_CLIENT_APPENDS = 64 * 1024;

    private int memberId = -1;
    private List<Member> members = List.of();
    private long electionTimeoutNs = TimeoutProfile.LAN.electionTimeoutNs();
    private long heartbeatIntervalNs = TimeoutProfile.LAN.heartbeatIntervalNs();
    private int maxBlockBytes = DEFAULT_MAX_BLOCK_BYTES;
    private long maxInFlightBytes = DEFAULT_MAX_IN_FLIGHT_BYTES;
    private int maxPendingClientAppends = DEFAULT_MAX_PENDING_CLIENT_APPENDS;
    private boolean syncStandby;
    private int relay = -1;
    private boolean frozen;

    /**
     * @param memberId this member's id.
     * @return this.
     */
    public ConsensusConfig memberId(final int memberId)
    {
        checkNotFrozen();
        this.memberId = memberId;
        return this;
    }

    /**
     * @param members every member, this one included.
     * @return this.
     */
    public ConsensusConfig members(final List<Member> members)
    {
        checkNotFrozen();
        this.members = List.copyOf(members);
        return this;
    }

    /**
     * @param profile election and heartbeat timings (default {@link TimeoutProfile#LAN}).
     * @return this.
     */
    public ConsensusConfig timeouts(final TimeoutProfile profile)
    {
        return timeouts(profile.electionTimeoutNs(), profile.heartbeatIntervalNs());
    }

    /**
     * @param electionTimeoutNs   base election timeout; each wait is randomised in [t, 1.5t).
     * @param heartbeatIntervalNs longest a leader stays silent towards a follower.
     * @return this.
     */
    public ConsensusConfig timeouts(final long electionTimeoutNs, final long heartbeatIntervalNs)
    {
        checkNotFrozen();
        this.electionTimeoutNs = electionTimeoutNs;
        this.heartbeatIntervalNs = heartbeatIntervalNs;
        return this;
    }

    /**
     * @param maxBlockBytes bound on log bytes in one append request (must fit the log's batch).
     * @return this.
     */
    public ConsensusConfig maxBlockBytes(final int maxBlockBytes)
    {
        checkNotFrozen();
        this.maxBlockBytes = maxBlockBytes;
        return this;
    }

    /**
     * @param maxInFlightBytes bound on log bytes sent to a follower and not yet acknowledged.
     * @return this.
     */
    public ConsensusConfig maxInFlightBytes(final long maxInFlightBytes)
    {
        checkNotFrozen();
        this.maxInFlightBytes = maxInFlightBytes;
        return this;
    }

    /**
     * @param maxPendingClientAppends bound on driver appends waiting for commit.
     * @return this.
     */
    public ConsensusConfig maxPendingClientAppends(final int maxPendingClientAppends)
    {
        checkNotFrozen();
        this.maxPendingClientAppends = maxPendingClientAppends;
        return this;
    }

    /**
     * @return a config with the profile's timings and default bounds.
     */
    public static ConsensusConfig of(final int memberId, final List<Member> members, final TimeoutProfile profile)
    {
        return new ConsensusConfig().memberId(memberId).members(members).timeouts(profile).validate();
    }

    /**
     * Check the settings as a whole, and freeze them.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first setting that does not fit.
     */
    public ConsensusConfig validate()
    {
        checkMembers();
        if (heartbeatIntervalNs <= 0 || electionTimeoutNs <= 2 * heartbeatIntervalNs)
        {
            throw new IllegalArgumentException("election timeout must exceed two heartbeat intervals");
        }
        if (maxBlockBytes < 1024 || maxInFlightBytes < maxBlockBytes || maxPendingClientAppends < 1)
        {
            throw new IllegalArgumentException("bounds out of range");
        }
        if (syncStandby && members.stream().allMatch(Member::voting))
        {
            throw new IllegalArgumentException("the synchronous standby option needs a standby (a /nonvoting member)");
        }
        if (relay >= 0 && (null == member(relay) || member(relay).voting()))
        {
            throw new IllegalArgumentException("the relay must be a standby (a /nonvoting member), not " + relay);
        }
        frozen = true;
        return this;
    }

    private void checkNotFrozen()
    {
        if (frozen)
        {
            throw new IllegalStateException("this consensus config was validated, and an agent may be running on it: " +
                "make a new one");
        }
    }

    private void checkMembers()
    {
        if (members.isEmpty() || members.size() > MAX_MEMBERS)
        {
            throw new IllegalArgumentException("between 1 and " + MAX_MEMBERS + " members needed, got "
                + members.size());
        }
        boolean self = false;
        long seen = 0;
        int voting = 0;
        for (final Member m : members)
        {
            if (m.id() < 0 || m.id() >= MAX_MEMBERS)
            {
                throw new IllegalArgumentException("member id out of range [0, " + MAX_MEMBERS + "): " + m.id());
            }
            if ((seen & (1L << m.id())) != 0)
            {
                throw new IllegalArgumentException("member id listed twice: " + m.id());
            }
            seen |= 1L << m.id();
            self |= m.id() == memberId;
            voting += m.voting() ? 1 : 0;
        }
        if (!self)
        {
            throw new IllegalArgumentException("member id " + memberId + " is not in the members list");
        }
        if (voting == 0)
        {
            throw new IllegalArgumentException("at least one voting member needed");
        }
    }

    public int memberId()
    {
        return memberId;
    }

    public List<Member> members()
    {
        return members;
    }

    public Member member(final int id)
    {
        for (final Member m : members)
        {
            if (m.id() == id)
            {
                return m;
            }
        }
        return null;
    }

    public long electionTimeoutNs()
    {
        return electionTimeoutNs;
    }

    public long heartbeatIntervalNs()
    {
        return heartbeatIntervalNs;
    }

    /**
     * How long a member waits for its leader, or a candidate for its votes, before it stands (again): in
     * [t, 1.5t) of the election timeout, wide enough (a hundred round trips on a LAN) that candidates rarely collide,
     * narrow enough that the first follower to notice a dead leader does so soon after t.
     *
     * @param random uniform in [0, 1), from the member's seeded source.
     * @return the wait, in nanoseconds.
     */
    long electionWaitNs(final double random)
    {
        return electionTimeoutNs + (long)(random * electionTimeoutNs / 2);
    }

    /**
     * How long a candidate whose election is known to be lost (a split vote: the votes granted, with those of the
     * connected voters yet to answer, fall short of a quorum; see {@code VoteTally.refuse}) waits before it tries
     * again: one to two heartbeat intervals, not the rest of an election timeout. In a failover two followers that
     * saw the leader's connection drop within a round trip of each other both stand, and across zones an election
     * timeout is seconds. A connected voter that has not answered keeps the election open for its whole timeout, so
     * a slow disk or link never makes a candidate give up early, and a retry starts with a pre-vote. Only the first
     * split vote since a leader was heard is retried this soon.
     *
     * @param random uniform in [0, 1), from the member's seeded source.
     * @return the wait, in nanoseconds.
     */
    long candidateRetryNs(final double random)
    {
        return heartbeatIntervalNs + (long)(random * heartbeatIntervalNs);
    }

    public int maxBlockBytes()
    {
        return maxBlockBytes;
    }

    public long maxInFlightBytes()
    {
        return maxInFlightBytes;
    }

    /**
     * The synchronous standby option (RPO 0 across the loss of the primary zone): a leader commits, and so
     * acknowledges, an entry only once a voting majority <em>and</em> a majority of the standbys (non-voting members)
     * hold it durably, so that whichever majority of them a promotion elects from holds it. The cost is one round trip
     * to the standby's zone on every commit, and commits stop while no standby answers (availability traded for no
     * loss). Off by default. Every voting member must be configured alike: each applies its own setting when it leads.
     *
     * @return this; {@link #validate()} refuses it if there is no standby to wait for.
     */
    public ConsensusConfig syncStandby(final boolean sync)
    {
        checkNotFrozen();
        this.syncStandby = sync;
        return this;
    }

    public boolean syncStandby()
    {
        return syncStandby;
    }

    /**
     * One standby feeds the others: the leader sends the log across the zone link to this standby only, which
     * forwards each append, as received, to the other standbys in its zone; they acknowledge to the leader directly
     * (small messages). A standby that falls behind the forwarded stream (restarted, cut off) is caught up by the
     * leader directly until it follows again. The same on every member.
     *
     * @param standbyId a non-voting member's id, or -1 for none (each standby its own stream).
     * @return this; {@link #validate()} refuses a member that is not a standby.
     */
    public ConsensusConfig relay(final int standbyId)
    {
        checkNotFrozen();
        this.relay = standbyId;
        return this;
    }

    public int relay()
    {
        return relay;
    }

    public int maxPendingClientAppends()
    {
        return maxPendingClientAppends;
    }
}
