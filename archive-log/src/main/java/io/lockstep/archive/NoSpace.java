package io.lockstep.archive;

/**
 * Tells a full disk from other I/O errors. Java reports {@code ENOSPC} and {@code EDQUOT} only as an
 * {@code IOException} carrying the system's message, so the message is what can be matched (on Linux and macOS).
 */
public final class NoSpace
{
    private NoSpace()
    {
    }

    /** @return true if the error, or one of its causes, says the device or the user's quota is full. */
    public static boolean is(final Throwable error)
    {
        for (Throwable t = error; null != t; t = t.getCause())
        {
            final String message = t.getMessage();
            if (null != message && (message.contains("No space left on device") ||
                message.contains("Disk quota exceeded")))
            {
                return true;
            }
            if (t.getCause() == t)
            {
                break;
            }
        }
        return false;
    }
}
