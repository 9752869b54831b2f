package io.lockstep.archive;

import java.nio.file.Path;

/**
 * A problem with stored data or its use, with a {@link Reason} a caller can act on and, where known, the file and
 * log position it concerns. Corruption is never skipped silently: the log serves nothing past the damage.
 */
public final class ArchiveException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Reason
    {
        /** Data was written by a newer format version, or is not a Lockstep archive at all. */
        UNSUPPORTED_FORMAT,
        /** The log descriptor fails its checksum or cannot be parsed. */
        CORRUPT_DESCRIPTOR,
        /** The log directory does not match the configuration it is opened with. */
        CONFIG_MISMATCH,
        /** A frame failed validation (checksum, length, position) where a whole frame should be. */
        CORRUPT_FRAME,
        /** A segment file is shorter than the segment length. */
        TRUNCATED_SEGMENT,
        /** A segment between the first and the last is missing. */
        MISSING_SEGMENT,
        /** The recording log fails its checksum or cannot be parsed. */
        CORRUPT_RECORDING_LOG,
        /** A snapshot fails its checksum or its structure is wrong. */
        CORRUPT_SNAPSHOT,
        /** The position asked for has been purged from the log. */
        PURGED,
        /** The position asked for is not the start of a frame. */
        NOT_FRAME_BOUNDARY,
        /** An I/O operation failed. */
        IO_ERROR
    }

    private final Reason reason;
    private final transient Path file;
    private final long position;

    /**
     * @param reason   what went wrong.
     * @param file     the file concerned, or null.
     * @param position the log or file position concerned, or -1.
     * @param detail   what was found.
     */
    public ArchiveException(final Reason reason, final Path file, final long position, final String detail)
    {
        this(reason, file, position, detail, null);
    }

    /**
     * @param reason   what went wrong.
     * @param file     the file concerned, or null.
     * @param position the log or file position concerned, or -1.
     * @param detail   what was found.
     * @param cause    underlying exception, or null.
     */
    public ArchiveException(
        final Reason reason, final Path file, final long position, final String detail, final Throwable cause)
    {
        super(message(reason, file, position, detail), cause);
        this.reason = reason;
        this.file = file;
        this.position = position;
    }

    /**
     * @return what went wrong.
     */
    public Reason reason()
    {
        return reason;
    }

    /**
     * @return the file concerned, or null.
     */
    public Path file()
    {
        return file;
    }

    /**
     * @return the log or file position concerned, or -1.
     */
    public long position()
    {
        return position;
    }

    private static String message(final Reason reason, final Path file, final long position, final String detail)
    {
        final StringBuilder sb = new StringBuilder(128).append(reason).append(": ").append(detail);
        if (null != file)
        {
            sb.append(" [file=").append(file);
            if (position >= 0)
            {
                sb.append(" position=").append(position);
            }
            sb.append(']');
        }
        else if (position >= 0)
        {
            sb.append(" [position=").append(position).append(']');
        }
        return sb.toString();
    }
}
