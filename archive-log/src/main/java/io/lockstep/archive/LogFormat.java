package io.lockstep.archive;

/**
 * Versions of the on-disk formats this build reads and writes.
 */
public final class LogFormat
{
    /**
     * Format version of log directories, recording logs and snapshots written by this build. A reader refuses data
     * from a newer version with {@code UNSUPPORTED_FORMAT} rather than guess at it.
     */
    public static final int FORMAT_VERSION = 1;

    /** Name of the descriptor file in a log directory. */
    public static final String DESCRIPTOR_FILE = "log.descriptor";

    /** Name of the promise file in a log directory ({@code PromiseFile}). */
    public static final String PROMISE_FILE = "log.promise";

    private LogFormat()
    {
    }
}
