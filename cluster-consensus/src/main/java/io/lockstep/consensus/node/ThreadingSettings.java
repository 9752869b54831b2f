package io.lockstep.consensus.node;

import io.lockstep.consensus.service.ServiceHandoff;
import io.lockstep.consensus.service.ServiceIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.Locale;
import java.util.Properties;

/**
 * Which threads a member runs ({@code lockstep.threading}) and how its service thread waits
 * ({@code lockstep.service.idle}).
 * <ul>
 * <li>{@code shared} (default): one thread runs consensus, the service and client sessions, in one duty cycle. For
 * small machines like a two-core VM running three members: every extra runnable thread there is queueing delay
 * for the others.</li>
 * <li>{@code dedicated}: the service runs on a thread of its own, applying committed entries while the consensus
 * thread goes on receiving, appending and replicating. For machines with cores to spare and services that take
 * real time per message (a matching engine with deep books): consensus latency no longer waits behind the
 * service. The consensus thread keeps the sessions and sends egress from a copy of the container's tables that it
 * keeps in step with what the service did (see {@code ServiceHandoff}); only a service member can run dedicated.</li>
 * </ul>
 * The service thread waits with {@code park} (default: 100 spins, 10 yields, then parked until the consensus thread
 * publishes a higher commit position, which unparks it, or 1 ms), {@code yield} or {@code spin} (a core kept busy).
 * The consensus thread waits as {@code lockstep.idle} says, in either mode.
 *
 * @param dedicated   true for a service thread of its own.
 * @param serviceIdle park, yield or spin.
 */
public record ThreadingSettings(boolean dedicated, String serviceIdle)
{
    public static final String THREADING = "lockstep.threading";
    public static final String SERVICE_IDLE = "lockstep.service.idle";

    /** The default: shared, and park for the service thread if dedicated is chosen. */
    public static final ThreadingSettings DEFAULT = new ThreadingSettings(false, "park");

    static ThreadingSettings parse(final String source, final Properties p) throws NodeConfig.ConfigException
    {
        final String mode = p.getProperty(THREADING, "shared").trim().toLowerCase(Locale.ROOT);
        if (!"shared".equals(mode) && !"dedicated".equals(mode))
        {
            throw new NodeConfig.ConfigException(source + ": " + THREADING + " must be shared or dedicated, not '" +
                p.getProperty(THREADING) + "'");
        }
        final String idle = p.getProperty(SERVICE_IDLE, DEFAULT.serviceIdle).trim().toLowerCase(Locale.ROOT);
        if (!"park".equals(idle) && !"yield".equals(idle) && !"spin".equals(idle))
        {
            throw new NodeConfig.ConfigException(source + ": " + SERVICE_IDLE + " must be park, yield or spin, not '" +
                p.getProperty(SERVICE_IDLE) + "'");
        }
        return new ThreadingSettings("dedicated".equals(mode), idle);
    }

    /**
     * @param handoff the member's handoff, which the park strategy waits on.
     * @return the service thread's idle strategy.
     */
    IdleStrategy newServiceIdleStrategy(final ServiceHandoff handoff)
    {
        return switch (serviceIdle)
        {
            case "spin" -> new ServiceIdleStrategy(handoff, Integer.MAX_VALUE, 0);
            case "yield" -> new ServiceIdleStrategy(handoff, 0, Integer.MAX_VALUE);
            default -> new ServiceIdleStrategy(handoff, 100, 10);
        };
    }
}
