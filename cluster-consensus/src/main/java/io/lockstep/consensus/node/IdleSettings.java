package io.lockstep.consensus.node;

import io.lockstep.archive.BackgroundPriority;
import io.lockstep.cluster.transport.SelectorIdleStrategy;
import io.lockstep.cluster.transport.TcpTransport;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.Locale;
import java.util.Properties;

/**
 * How a member's thread waits when a duty cycle found nothing to do ({@code lockstep.idle},
 * {@code lockstep.idle.spins}, {@code lockstep.idle.yields}).
 * <ul>
 * <li>{@code selector} (default): a few spins and yields, then a wait in the socket selector (epoll, at most 1 ms)
 * that returns the moment a message arrives. For machines where members share cores with each other and with
 * clients: a waiting member gives its core away.</li>
 * <li>{@code yield}: {@code Thread.yield()} between cycles; the thread stays runnable, so it never pays the wake-up
 * from epoll, but gives way to anything else runnable on its core.</li>
 * <li>{@code spin}: busy spin, never sleeping: the lowest latency, one core per member kept at 100%. Only for
 * machines with a core to spare for each member (and the client gateways).</li>
 * </ul>
 * The spins and yields apply to {@code selector}. The defaults (10 spins, 1 yield) are small because on a machine
 * where members share cores, longer spinning took CPU from the others without lowering the p99 (figures in
 * benchmarks/results/history.md). The selector strategy skips them while they keep finding nothing (see
 * {@link SelectorIdleStrategy}).
 * <p>
 * {@code lockstep.background.nice} (default 0: off) is the nice value of the threads that do slow file work beside
 * the member's (see {@link BackgroundPriority}): on a machine where members share cores, a segment rollover or a
 * snapshot then takes a CPU only while no member's thread wants it. Off by default because a member whose CPU is
 * saturated then starves them: its snapshots become durable late, its purges fall behind, and its log outgrew its
 * bound (SnapshotInstallIT: 13.6-22 MB against 7.3 MB) on two cores under that test's load.
 *
 * @param strategy       selector, yield or spin.
 * @param spins          selector: busy spins after a cycle with no work before yielding.
 * @param yields         selector: yields after the spins before waiting in epoll.
 * @param backgroundNice nice value of the background file threads, 0-19 (0: as the member's).
 */
public record IdleSettings(String strategy, int spins, int yields, int backgroundNice)
{
    public static final String IDLE = "lockstep.idle";
    public static final String SPINS = "lockstep.idle.spins";
    public static final String YIELDS = "lockstep.idle.yields";
    public static final String BACKGROUND_NICE = "lockstep.background.nice";
    /** Longest wait in the selector: timers, heartbeats and snapshot completion are looked at least this often. */
    static final long MAX_WAIT_MS = 1;

    /**
     * @param strategy selector, yield or spin.
     * @param spins    selector: busy spins after a cycle with no work before yielding.
     * @param yields   selector: yields after the spins before waiting in epoll.
     */
    public IdleSettings(final String strategy, final int spins, final int yields)
    {
        this(strategy, spins, yields, 0);
    }

    /** The default: selector, 10 spins, 1 yield, background threads at the member's priority. */
    public static final IdleSettings DEFAULT = new IdleSettings("selector", 10, 1, 0);

    static IdleSettings parse(final String source, final Properties p) throws NodeConfig.ConfigException
    {
        final String strategy = p.getProperty(IDLE, DEFAULT.strategy).trim().toLowerCase(Locale.ROOT);
        if (!"selector".equals(strategy) && !"yield".equals(strategy) && !"spin".equals(strategy))
        {
            throw new NodeConfig.ConfigException(source + ": " + IDLE + " must be selector, yield or spin, not '" +
                p.getProperty(IDLE) + "'");
        }
        return new IdleSettings(strategy, count(source, p, SPINS, DEFAULT.spins), count(source, p, YIELDS,
            DEFAULT.yields), count(source, p, BACKGROUND_NICE, DEFAULT.backgroundNice, BackgroundPriority.MAX_NICE));
    }

    private static int count(final String source, final Properties p, final String key, final int fallback)
        throws NodeConfig.ConfigException
    {
        return count(source, p, key, fallback, 1_000_000);
    }

    private static int count(
        final String source, final Properties p, final String key, final int fallback, final int max)
        throws NodeConfig.ConfigException
    {
        final String value = p.getProperty(key, Integer.toString(fallback)).trim();
        try
        {
            final int n = Integer.parseInt(value);
            if (n >= 0 && n <= max)
            {
                return n;
            }
        }
        catch (final NumberFormatException ex)
        {
            // Named below.
        }
        throw new NodeConfig.ConfigException(source + ": " + key + " must be a whole number in [0, " + max +
            "], not '" + value + "'");
    }

    /**
     * @param transport the member's transport, whose sockets the selector strategy waits on.
     * @return the idle strategy these settings describe.
     */
    IdleStrategy newIdleStrategy(final TcpTransport transport)
    {
        return switch (strategy)
        {
            case "spin" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            default -> new SelectorIdleStrategy(transport, spins, yields, MAX_WAIT_MS);
        };
    }
}
