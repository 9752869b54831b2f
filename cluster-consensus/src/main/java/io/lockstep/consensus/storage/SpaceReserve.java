package io.lockstep.consensus.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file of space held back in a member's data directory ({@code space.reserve}, 256 KiB of written zeros, so the
 * blocks are really taken). On a full disk a member must still make its term and vote durable before it answers,
 * or it cannot even step down: the reserve is given up for the moment of that write and taken again right after.
 * Replacing {@code election.state} frees the old file's blocks as it takes the new one's, so the reserve comes back
 * whole unless something else took the space meanwhile.
 */
final class SpaceReserve
{
    static final String FILE_NAME = "space.reserve";
    static final int BYTES = 256 * 1024;
    private static final System.Logger LOGGER = System.getLogger(SpaceReserve.class.getName());

    private final Path file;

    SpaceReserve(final Path directory)
    {
        this.file = directory.resolve(FILE_NAME);
    }

    /** Take the reserve, if it is not there whole; a disk without the room is said once and left as it is. */
    void take()
    {
        try
        {
            if (Files.exists(file) && Files.size(file) >= BYTES)
            {
                return;
            }
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE))
            {
                final ByteBuffer zeros = ByteBuffer.allocate(BYTES);
                while (zeros.hasRemaining())
                {
                    channel.write(zeros, zeros.position());
                }
                channel.force(true);
            }
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot hold {0} bytes of space in {1} ({2}): on a full disk " +
                "this member may not be able to record a new term or vote, and would stop", BYTES, file,
                ex.getMessage());
            release();
        }
    }

    /** Give the space back to the filesystem, for the write that needs it. */
    void release()
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot delete {0}: {1}", file, ex.getMessage());
        }
    }
}
