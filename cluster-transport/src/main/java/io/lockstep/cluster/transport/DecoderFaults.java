package io.lockstep.cluster.transport;

/**
 * Tells a message's fault from the receiver's: an exception thrown while handling a message is the message's fault
 * when it was thrown inside a generated decoder, or an enum a decoder reads into (or by the buffer a decoder read,
 * on its behalf), and the receiver's own failure otherwise, a generated encoder's included. The first is answered
 * by closing the connection that sent the message; the second must stop the member loudly, as every broken
 * invariant does.
 */
public final class DecoderFaults
{
    private DecoderFaults()
    {
    }

    /**
     * @param ex     what was thrown while a message was handled.
     * @param shapes the protocols read, which name their codecs' packages.
     * @return true if the innermost frame outside Agrona and the JDK is a generated decoder's.
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
            return shapes.isDecoding(className);
        }
        return false;
    }
}
