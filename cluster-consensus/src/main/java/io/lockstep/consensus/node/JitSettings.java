package io.lockstep.consensus.node;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.lockstep.cluster.JvmOptions;

import java.lang.management.ManagementFactory;

/**
 * The one JVM flag a member's tail depends on, and what a member does without it. By default C2 leaves out the
 * branches a method has not yet taken and falls back to the interpreter the first time one is taken. A member takes
 * such branches rarely but on its hot paths (its first segment rollover, snapshot or failover under load), and each
 * costs every member a stall of milliseconds; {@code -XX:PerMethodTrapLimit=0} makes C2 compile those branches too.
 * {@code bin/lockstep} sets it. A member started in a JVM without it runs a {@link JitRehearsal} first, once per JVM,
 * so that C2 has seen those branches taken; the figures, both ways, are in docs/how-to/tune-latency.md.
 */
final class JitSettings
{
    static final String FLAG = JvmOptions.MEMBER_JIT;
    private static final System.Logger LOGGER = System.getLogger(JitSettings.class.getName());
    /** Guarded by the class: the first member started in this JVM rehearses, the others find it done. */
    private static boolean rehearsed;

    private JitSettings()
    {
    }

    /**
     * Before a member serves: nothing if the JVM has the flag (or is not HotSpot); otherwise rehearse, the first time
     * in this JVM.
     *
     * @param config the member about to start.
     */
    static synchronized void prepare(final NodeConfig config)
    {
        if (hasFlag() || rehearsed)
        {
            return;
        }
        rehearsed = true;
        LOGGER.log(System.Logger.Level.INFO, "member {0}: this JVM runs without {1}, so a throwaway cluster " +
            "rehearses in this process first (5-15 s, once per JVM); start the JVM with {1}, as bin/lockstep " +
            "does, to skip it", config.memberId(), FLAG);
        final long start = System.nanoTime();
        final JitRehearsal.Outcome outcome = JitRehearsal.run(config);
        if (null != outcome)
        {
            // The whole pause of the member's start, the throwaway members' closing and clean-up included.
            LOGGER.log(System.Logger.Level.INFO, "member {0}: rehearsed in {1} ms: {2} messages, {3} segment " +
                "rollovers, {4} snapshots, {5} client sessions, a failover", config.memberId(),
                (System.nanoTime() - start) / 1_000_000, outcome.messages(), outcome.rollovers(), outcome.snapshots(),
                outcome.sessions());
        }
    }

    /**
     * @return true if the JVM runs with the flag, or is not a HotSpot JVM (where the flag means nothing).
     */
    static boolean hasFlag()
    {
        try
        {
            final HotSpotDiagnosticMXBean hotSpot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            return null == hotSpot || "0".equals(hotSpot.getVMOption("PerMethodTrapLimit").getValue());
        }
        catch (final IllegalArgumentException | UnsupportedOperationException | LinkageError ex)
        {
            return true;
        }
    }
}
