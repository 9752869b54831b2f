package io.lockstep.consensus.node;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;

/**
 * The one JVM flag a member's tail depends on. By default C2 leaves out the branches a method has not yet taken and
 * falls back to the interpreter the first time one is taken. A member takes such branches rarely but on its hot
 * paths (the first log segment rollover stalled every member for 17-25 ms at 10k msg/s), and three members in plain
 * JVMs had a p99 two to eight times that of members with {@code -XX:PerMethodTrapLimit=0}, which makes C2 compile
 * those branches too. {@code bin/lockstep} sets it; a member started in another JVM says at start that it is
 * missing, with the fix.
 */
final class JitSettings
{
    static final String FLAG = "-XX:PerMethodTrapLimit=0";

    private JitSettings()
    {
    }

    /**
     * @return what to tell the operator when this JVM runs without the flag; null when it has it, or is not a
     * HotSpot JVM (nothing to say there).
     */
    static String warning()
    {
        try
        {
            final HotSpotDiagnosticMXBean hotSpot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (null == hotSpot || "0".equals(hotSpot.getVMOption("PerMethodTrapLimit").getValue()))
            {
                return null;
            }
        }
        catch (final IllegalArgumentException | UnsupportedOperationException | LinkageError ex)
        {
            return null;
        }
        return "this JVM runs without " + FLAG + ": expect a p99 several times higher and stalls of tens of " +
            "milliseconds (the JIT falls back to the interpreter on branches it left out, such as a log segment " +
            "rollover's). Add " + FLAG + " to the JVM's options, as bin/lockstep does";
    }
}
