package io.lockstep.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Whole-file replacement that a crash at any byte leaves either old or new: write a temporary file, make it durable,
 * rename it over the target, make the rename durable. For small control files (descriptor, recording log).
 */
public final class AtomicFile
{
    private AtomicFile()
    {
    }

    /**
     * @param target  file to replace.
     * @param content its new content, from position to limit.
     */
    public static void write(final Path target, final ByteBuffer content)
    {
        final Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try
        {
            try (FileChannel channel = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
            {
                while (content.hasRemaining())
                {
                    channel.write(content);
                }
                channel.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            SegmentFiles.fsyncDirectory(target.getParent());
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(target, "cannot write atomically", ex);
        }
    }

    /**
     * @param file to read.
     * @return its whole content, or null if it does not exist.
     */
    public static byte[] readOrNull(final Path file)
    {
        try
        {
            return Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(file, "cannot read", ex);
        }
    }
}
