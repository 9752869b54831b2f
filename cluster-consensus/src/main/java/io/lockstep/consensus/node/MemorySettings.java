package io.lockstep.consensus.node;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;

/**
 * A member's memory, from one setting: {@code lockstep.memory} (for example {@code 1g} or {@code 512m}), what the
 * member's JVM may use in all. The launchers read it from the configuration file before they start the JVM and give
 * three quarters to the heap ({@code -Xms} and {@code -Xmx}, so it never grows) and a quarter to direct buffers
 * ({@code -XX:MaxDirectMemorySize}): the connections' read and write buffers, the log's batch and the snapshot
 * buffers live there. Unset, the JVM's own defaults apply (a quarter of the machine's memory for the heap).
 * <p>
 * Whatever the JVM was given, the member keeps to it: it refuses a new session, rather than run out of heap, once
 * open sessions with full egress buffers would need half of its heap ({@link #sessionLimit}); the other half is the
 * service's state, the log's and the garbage collector's.
 */
public final class MemorySettings
{
    /** The key: the member JVM's memory in all (heap and direct buffers), with a unit k, m or g. */
    public static final String MEMORY = "lockstep.memory";
    /** Below this a member does not fit its own buffers. */
    static final long MIN_BYTES = 128L << 20;
    /** What a session holds besides its egress buffer: its table entry, its secret, its principal. */
    static final int SESSION_OVERHEAD_BYTES = 1024;

    private MemorySettings()
    {
    }

    /**
     * @return the size in bytes.
     * @throws IllegalArgumentException naming the key and the value, for a value that is not a size of at least 128m.
     */
    public static long parse(final String value)
    {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        String digits = v;
        if (v.endsWith("k") || v.endsWith("m") || v.endsWith("g"))
        {
            unit = v.endsWith("k") ? 1L << 10 : v.endsWith("m") ? 1L << 20 : 1L << 30;
            digits = v.substring(0, v.length() - 1);
        }
        final long bytes;
        try
        {
            bytes = Math.multiplyExact(Long.parseLong(digits), unit);
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException(MEMORY + " must be a size such as 512m or 2g, not '" + value + "'");
        }
        if (bytes < MIN_BYTES)
        {
            throw new IllegalArgumentException(MEMORY + "=" + value + " is below 128m: a member does not fit");
        }
        return bytes;
    }

    /**
     * @return the JVM options the launchers give for that much memory (the launchers repeat this in shell; a test
     * holds them to it).
     */
    public static List<String> jvmOptions(final long bytes)
    {
        final long mib = bytes >> 20;
        // -Xms as -Xmx: the heap is the size it will be from the start, so it never grows (a pause) under load.
        return List.of("-Xms" + (mib * 3 / 4) + "m", "-Xmx" + (mib * 3 / 4) + "m",
            "-XX:MaxDirectMemorySize=" + (mib / 4) + "m");
    }

    /**
     * @return what this JVM lets direct buffers take: {@code -XX:MaxDirectMemorySize}, or the heap's bound when it
     * was not given (the JVM's default).
     */
    static long maxDirectBytes()
    {
        final HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        final long set = null == hotspot ? 0 : Long.parseLong(hotspot.getVMOption("MaxDirectMemorySize").getValue());
        return set > 0 ? set : Runtime.getRuntime().maxMemory();
    }

    /**
     * @param maxHeapBytes  the JVM's heap bound ({@code Runtime.maxMemory()}).
     * @param maxSessions   the session table's size.
     * @param egressBytes   the egress kept per session at most.
     * @return how many sessions this member accepts: as many as fit, with full egress buffers, in half the heap.
     */
    public static int sessionLimit(final long maxHeapBytes, final int maxSessions, final int egressBytes)
    {
        final long fit = (maxHeapBytes / 2) / (egressBytes + SESSION_OVERHEAD_BYTES);
        return (int)Math.max(1, Math.min(maxSessions, fit));
    }
}
