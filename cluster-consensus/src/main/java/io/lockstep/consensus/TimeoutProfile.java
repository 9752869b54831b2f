package io.lockstep.consensus;

import java.util.concurrent.TimeUnit;

/**
 * Election and heartbeat timings.
 * <ul>
 *   <li>{@code LAN}: election timeout 200 ms (randomised in [200, 300) ms), heartbeat every 40 ms. A dead leader is
 *   noticed 200 to 300 ms after its last contact (about 233 ms on average by the first of two followers) and a
 *   pre-vote plus a vote cost two round trips (well under a millisecond on a LAN), so a new leader serves about a
 *   quarter of a second after the old one dies. Five heartbeats per
 *   timeout ride out a lost heartbeat or a short pause without an election.
 *   A leader whose process dies is noticed sooner than any timeout: the kernel closes its connections, and a follower
 *   that sees its leader's connection drop stands for election within a heartbeat interval (client-observed outage
 *   66-96 ms in {@code bench failover}). The timeout is for what does not close a connection: a hung process, a
 *   partition, a dead machine.</li>
 *   <li>{@code WAN}: election timeout 2 s, heartbeat every 300 ms, for members across zones where round trips are
 *   tens of milliseconds and a brief network hiccup must not depose the leader.</li>
 * </ul>
 * A candidate whose election is known lost (a split vote) tries again after one to two heartbeat intervals
 * ({@code ConsensusConfig.candidateRetryNs}), not a whole election timeout: the first split vote since a leader was
 * heard only.
 */
public enum TimeoutProfile
{
    LAN(TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.MILLISECONDS.toNanos(40)),
    WAN(TimeUnit.MILLISECONDS.toNanos(2000), TimeUnit.MILLISECONDS.toNanos(300));

    private final long electionTimeoutNs;
    private final long heartbeatIntervalNs;

    TimeoutProfile(final long electionTimeoutNs, final long heartbeatIntervalNs)
    {
        this.electionTimeoutNs = electionTimeoutNs;
        this.heartbeatIntervalNs = heartbeatIntervalNs;
    }

    public long electionTimeoutNs()
    {
        return electionTimeoutNs;
    }

    public long heartbeatIntervalNs()
    {
        return heartbeatIntervalNs;
    }
}
