package io.lockstep.archive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A log's full disk: why its last write could not be made, when to try again, and when the device has room again.
 * The log keeps the frames it could not write and tries again at most every 50 ms (each try is a write system call
 * that fails, and a member may meet a full disk for hours). Writer thread only.
 */
final class WriteProblem
{
    private static final System.Logger LOGGER = System.getLogger(WriteProblem.class.getName());
    /** How often a log that found no space tries its write again. */
    private static final long RETRY_NS = 50_000_000L;

    private final Path directory;
    private final long roomNeeded;
    private String problem;
    private long retryAtNs;

    /** @param roomNeeded bytes the device must have free before the log counts itself able to write again. */
    WriteProblem(final Path directory, final long roomNeeded)
    {
        this.directory = directory;
        this.roomNeeded = roomNeeded;
    }

    /** @return true while a write failed for want of space and the next try is not due yet. */
    boolean waiting()
    {
        return null != problem && System.nanoTime() < retryAtNs;
    }

    /** @return true if the last write failed for want of space. */
    boolean present()
    {
        return null != problem;
    }

    /** A write of {@code length} bytes from {@code from} in {@code file} found no space. */
    void onNoSpace(final long from, final int length, final Path file)
    {
        if (null == problem)
        {
            LOGGER.log(System.Logger.Level.WARNING, "no space left to write log {0}: {1} bytes from position {2} " +
                "wait to be written; nothing written before is lost, and the log is written again once there is " +
                "space", file, length, from);
        }
        problem = "no space left on the device of " + directory + ": " + length + " bytes from position " + from +
            " wait to be written";
        retryAtNs = System.nanoTime() + RETRY_NS;
    }

    /** A write succeeded, up to a position. */
    void onWritten(final long position)
    {
        if (null != problem)
        {
            LOGGER.log(System.Logger.Level.WARNING, "log {0} is written again, up to {1}", directory, position);
            problem = null;
        }
    }

    /**
     * @param nothingPending true if the log holds no unwritten frames (they were dropped), so that only free space
     *                       can end the problem: looked at at most every 50 ms.
     * @return null, or why the log cannot write.
     */
    String describe(final boolean nothingPending)
    {
        if (null != problem && nothingPending && System.nanoTime() >= retryAtNs)
        {
            retryAtNs = System.nanoTime() + RETRY_NS;
            try
            {
                if (Files.getFileStore(directory).getUsableSpace() >= roomNeeded)
                {
                    LOGGER.log(System.Logger.Level.WARNING, "log {0} has space again", directory);
                    problem = null;
                }
            }
            catch (final IOException ex)
            {
                // Cannot tell: the problem stands until a write succeeds.
            }
        }
        return problem;
    }
}
