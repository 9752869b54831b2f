package io.lockstep.cluster.transport;

/**
 * Tells a message's fault from the receiver's: an exception thrown while handling a message is the message's fault
 * when it was thrown inside a generated codec (or by the buffer a codec read, on the codec's behalf), and the
 * receiver's own failure otherwise. The first is answered by closing the connection that sent the message; the
 * second must stop the member loudly, as every broken invariant does.
 */
public final class DecoderFaults
{
    private DecoderFaults()
    {
    }

    /**
     * @param ex     what was thrown while a message was handled.
     * @param shapes the protocols read, which name their codecs' packages.
     * @return true if the innermost frame outside Agrona and the JDK is a generated codec's.
     */
    public static boolean isDecoderFault(final Throwable ex, final MessageShapes shapes)
    {
        for (final StackTraceElement frame : ex.getStackTrace())
        {
            final String className = frame.getClassName();
            if (className.startsWith("org.agrona.") || className.startsWith("java.") ||
                className.startsWith("jdk.internal."))
            {
                continue;
            }
            return shapes.isCodec(className);
        }
        return false;
    }
}
