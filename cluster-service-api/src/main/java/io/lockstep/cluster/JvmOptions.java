package io.lockstep.cluster;

import org.agrona.BitUtil;

/**
 * The JVM options Lockstep cannot run without, checked where a member, a client or a simulation starts, so that a
 * JVM without them gets one error that says which option to add, not Agrona's {@code IllegalAccessError} or
 * {@code NoClassDefFoundError: Could not initialize class BufferUtil} from deep inside the first buffer.
 */
public final class JvmOptions
{
    /** The option, as it goes on a command line or in Surefire's and Failsafe's {@code argLine}. */
    public static final String ADD_EXPORTS = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";

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
                "bin/lockstep adds it). Lockstep also needs --add-opens java.base/sun.nio.ch=ALL-UNNAMED and " +
                "--add-opens java.base/java.nio=ALL-UNNAMED");
        }
    }
}
