package io.lockstep.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Makes the JDK build its reflective constructor for mapped buffers when the log opens, not at a segment rollover
 * under load.
 * <p>
 * {@code FileChannel.map} creates each {@code MappedByteBuffer} through a reflective constructor. On JDK 17 the first
 * 15 calls of a reflective constructor go through JNI; the 16th generates a bytecode accessor class, loading about 15
 * classes of {@code jdk.internal.reflect} and defining one: 5-9 ms of the member's thread inside a leader's third
 * segment rollover (one mapping per reader per rollover), under load.
 * <p>
 * Mapping zero bytes makes no system call and still goes through that constructor, so a few of those at open cost
 * microseconds. On JDKs whose reflection does not inflate (18 and later use method handles) it does no harm.
 */
final class MappingWarmUp
{
    /** More than JDK 17's inflation threshold (15, {@code sun.reflect.inflationThreshold}). */
    static final int MAPPINGS = 20;

    private MappingWarmUp()
    {
    }

    /**
     * @param readableFile any existing file (its contents are not read).
     * @throws ArchiveException naming the file if it cannot be opened.
     */
    static void run(final Path readableFile)
    {
        try (FileChannel channel = FileChannel.open(readableFile, StandardOpenOption.READ))
        {
            for (int i = 0; i < MAPPINGS; i++)
            {
                channel.map(FileChannel.MapMode.READ_ONLY, 0, 0);
            }
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(readableFile, "cannot open for the mapping warm-up", ex);
        }
    }
}
