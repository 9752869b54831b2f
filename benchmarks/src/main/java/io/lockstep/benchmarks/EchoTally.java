package io.lockstep.benchmarks;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What a failover benchmark counts, the same for every system: each message's id is echoed back; a second echo of
 * an id is a duplicate, an id never echoed is lost, and the outage runs from the last echo before the leader was
 * killed to the first echo of a message sent after it. Plain Java, so it loads on the Aeron classpath too.
 */
public final class EchoTally
{
    /** Bound on messages in one run. */
    public static final int MAX = 1 << 22;

    private final byte[] echoes = new byte[MAX];
    private final long[] sentAtNs = new long[MAX];
    private long lastEchoNs;
    private long lastEchoBeforeKillNs;
    private long killedAtNs;
    private long firstEchoAfterKillNs;
    private long duplicated;

    public void sent(final long id, final long nowNs)
    {
        sentAtNs[(int)id] = nowNs;
    }

    /**
     * Call just before killing the leader.
     */
    public void killing()
    {
        lastEchoBeforeKillNs = lastEchoNs;
    }

    /**
     * Call just after the leader is dead.
     */
    public void killed(final long nowNs)
    {
        killedAtNs = nowNs;
    }

    public boolean hasKilled()
    {
        return killedAtNs > 0;
    }

    public void echoed(final long id, final long nowNs)
    {
        lastEchoNs = nowNs;
        if (echoes[(int)id]++ > 0)
        {
            duplicated++;
        }
        if (killedAtNs > 0 && 0 == firstEchoAfterKillNs && sentAtNs[(int)id] > killedAtNs)
        {
            firstEchoAfterKillNs = nowNs;
        }
    }

    /**
     * @return distinct ids echoed.
     */
    public long received()
    {
        long n = 0;
        for (final byte b : echoes)
        {
            n += b > 0 ? 1 : 0;
        }
        return n;
    }

    /**
     * Print the readable and the key=value result lines.
     */
    public void report(final String system, final int rate, final int size, final long sent)
    {
        final long outageMs = firstEchoAfterKillNs > 0 ?
            TimeUnit.NANOSECONDS.toMillis(firstEchoAfterKillNs - lastEchoBeforeKillNs) : -1;
        final long lost = sent - received();
        System.out.printf(Locale.ROOT, "failover at %d msg/s: outage %d ms (last response before the kill to the " +
            "first response to a message sent after it), sent %d, lost %d, duplicated %d%n", rate, outageMs, sent, lost,
            duplicated);
        System.out.printf(Locale.ROOT, "%s mode=failover rate=%d size=%d outage_ms=%d sent=%d lost=%d duplicated=%d%n",
            system, rate, size, outageMs, sent, lost, duplicated);
    }
}
