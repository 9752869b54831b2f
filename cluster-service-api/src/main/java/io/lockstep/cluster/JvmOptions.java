package io.lockstep.cluster;

import org.agrona.BitUtil;

import java.util.ArrayList;
import java.util.List;

/**
 * The JVM options Lockstep cannot run without, checked where a member, a client or a simulation starts, so that a
 * JVM without them gets one error that says which option to add, not Agrona's {@code IllegalAccessError} or
 * {@code NoClassDefFoundError: Could not initialize class org.agrona.BufferUtil} from deep inside the first buffer.
 */
public final class JvmOptions
{
    /** The option, as it goes on a command line or in Surefire's and Failsafe's {@code argLine}. */
    public static final String ADD_EXPORTS = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";

    /**
     * Every JVM that runs Lockstep: Agrona reaches the JDK's {@code Unsafe} and the NIO internals. This is the one
     * definition; the launchers ({@code bin/lockstep}, the distribution's {@code bin/lockstep}) and the build's
     * {@code lockstep.jvm.args} repeat it, and a test holds them to it.
     */
    public static final List<String> REQUIRED = List.of(
        "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens", "java.base/java.nio=ALL-UNNAMED");

    /**
     * A member's JIT setting: C2 compiles branches not yet taken too, so that the first log segment rollover does
     * not deoptimise the hot append path on every member (a 17-25 ms stall at 10k msg/s). A member in a JVM without
     * it rehearses before it serves instead.
     */
    public static final String MEMBER_JIT = "-XX:PerMethodTrapLimit=0";

    /** @return {@link #REQUIRED} and {@link #MEMBER_JIT}: the options a member's JVM starts with. */
    public static List<String> member()
    {
        final ArrayList<String> options = new ArrayList<>(REQUIRED);
        options.add(MEMBER_JIT);
        return List.copyOf(options);
    }

    private JvmOptions()
    {
    }

    /**
     * @throws IllegalStateException naming the option to add, if this JVM does not export {@code jdk.internal.misc}
     *                               to the code Lockstep runs in (Agrona reaches the JDK's {@code Unsafe} there).
     */
    public static void check()
    {
        final Module agrona = BitUtil.class.getModule();
        if (!Object.class.getModule().isExported("jdk.internal.misc", agrona))
        {
            throw new IllegalStateException("this JVM runs without " + ADD_EXPORTS + ", which Agrona needs to reach " +
                "the JDK's Unsafe: add it to the JVM's options (for tests, to the argLine of Surefire and Failsafe; " +
                "bin/lockstep adds it). Lockstep needs all of " + String.join(" ", REQUIRED));
        }
    }
}
