package io.lockstep.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * That a log's promise was once found lost, kept on disk until the member durably holds the log committed by a
 * leader of a later term than its own when it last started (the consensus module decides; see
 * {@code ClusterFormation.onCommit}).
 * <p>
 * A member that starts under {@code BATCH} and finds its promise file missing, or holding nothing, beside a non-empty
 * log cannot say what it acknowledged before: recovery makes a new promise from what the log holds, which may be less.
 * The new promise looks whole at the next start, so without this mark a second restart would forget the loss and the
 * member would vouch again for what it holds when another member asks (a member that lost frames must count only on
 * answers that cover everything their senders may have acknowledged). The mark is written before the new promise, so
 * a crash between the two cannot leave a whole-looking promise and no mark; it moves with the promise when the log is
 * reset, and only {@link ArchiveLog#promiseKeptAgain()} removes it.
 * <p>
 * The file ({@link #FILE_NAME}) holds the status the promise was found in ("missing" or "untrusted"), in UTF-8.
 */
public final class PromiseLoss
{
    /** Name of the mark in a log directory. */
    public static final String FILE_NAME = "log.promise-lost";

    private PromiseLoss()
    {
    }

    /**
     * @param directory a log directory.
     * @return null if no loss is marked there; else how the promise was found when the loss was marked.
     */
    public static String read(final Path directory)
    {
        final byte[] bytes = AtomicFile.readOrNull(directory.resolve(FILE_NAME));
        if (null == bytes)
        {
            return null;
        }
        final String status = new String(bytes, StandardCharsets.UTF_8).trim();
        return status.isEmpty() ? PromiseFile.UNTRUSTED : status; // emptied by a disk that lost the write: still a loss
    }

    static void remember(final Path directory, final String status)
    {
        AtomicFile.write(directory.resolve(FILE_NAME), ByteBuffer.wrap(status.getBytes(StandardCharsets.UTF_8)));
    }

    static void forget(final Path directory)
    {
        try
        {
            if (Files.deleteIfExists(directory.resolve(FILE_NAME)))
            {
                SegmentFiles.fsyncDirectory(directory);
            }
        }
        catch (final IOException ex)
        {
            throw SegmentFiles.ioError(directory.resolve(FILE_NAME), "cannot delete", ex);
        }
    }
}
