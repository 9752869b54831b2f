package io.lockstep.cluster.transport;

/**
 * Text that may hold a peer's bytes, made safe to print on one line: an exception's message can carry what a peer
 * sent (the JDK's TLS code quotes a malformed server name whole, up to its 32 KiB handshake bound), and a log line or
 * a {@code tool errors} line built from it must not be able to start a forged line of its own, move the terminal's
 * cursor, reverse the text's direction, hide characters, or run to megabytes. Control characters, line and paragraph
 * separators, bidirectional overrides and invisible format characters become {@code \n}, {@code \r}, {@code \t} or
 * {@code \}{@code uXXXX}; a backslash is doubled, so that what was escaped can be told from what was sent; and the
 * text is cut to a bound, saying how much was left out.
 */
public final class PrintableText
{
    /** Longest text kept from any one problem: enough for every message Lockstep writes itself. */
    public static final int MAX_CHARS = 400;

    private PrintableText()
    {
    }

    /**
     * @param text     any text, or null.
     * @param maxChars longest result before the note of what was cut (at least 1).
     * @return the text on one line, escaped and cut; the text itself if it needs neither.
     */
    public static String of(final String text, final int maxChars)
    {
        if (null == text)
        {
            return "null";
        }
        final int keep = Math.min(text.length(), maxChars);
        if (keep == text.length() && isPlain(text))
        {
            return text;
        }
        final StringBuilder out = new StringBuilder(keep + 48);
        int i = 0;
        for (; i < text.length() && out.length() < maxChars; i++)
        {
            appendEscaped(out, text.charAt(i));
        }
        if (i < text.length())
        {
            out.append("... (").append(text.length() - i).append(" more characters)");
        }
        return out.toString();
    }

    /**
     * Cut only, for text that is made printable later, where it is logged or recorded (escaping it twice would
     * double its backslashes); the same note as {@link #of(String, int)} says what was cut. A character outside the
     * Basic Multilingual Plane is kept or cut whole.
     *
     * @param text     any text, or null.
     * @param maxChars longest result before the note of what was cut (at least 1).
     * @return the text itself if it is no longer than that.
     */
    public static String cut(final String text, final int maxChars)
    {
        if (null == text || text.length() <= maxChars)
        {
            return String.valueOf(text);
        }
        final int keep = Character.isHighSurrogate(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
        return text.substring(0, keep) + "... (" + (text.length() - keep) + " more characters)";
    }

    /**
     * @param text any text, or null.
     * @return {@link #of(String, int)} with {@link #MAX_CHARS}.
     */
    public static String of(final String text)
    {
        return of(text, MAX_CHARS);
    }

    /**
     * For text already made printable where it was recorded (a member's {@code tool errors}), printed again where it
     * arrives: control characters, separators and direction overrides escaped, nothing else changed or cut, so that
     * a sender of another version cannot start a line either.
     *
     * @param text any text.
     * @return the text with only those characters escaped.
     */
    public static String oneLine(final String text)
    {
        if (text.chars().noneMatch(c -> needsEscape((char)c)))
        {
            return text;
        }
        final StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            if (needsEscape(c))
            {
                appendEscaped(out, c);
            }
            else
            {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isPlain(final String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            if (c == '\\' || needsEscape(c))
            {
                return false;
            }
        }
        return true;
    }

    private static boolean needsEscape(final char c)
    {
        return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == '\u2028' || c == '\u2029' ||
            (c >= '\u202A' && c <= '\u202E') || (c >= '\u2066' && c <= '\u2069') || (c >= '\u200B' && c <= '\u200F') ||
            (c >= '\u2060' && c <= '\u2064') || (c >= '\uFFF9' && c <= '\uFFFB') || c == '\u061C' || c == '\uFEFF';
    }

    private static void appendEscaped(final StringBuilder out, final char c)
    {
        switch (c)
        {
            case '\\' -> out.append("\\\\");
            case '\n' -> out.append("\\n");
            case '\r' -> out.append("\\r");
            case '\t' -> out.append("\\t");
            default ->
            {
                if (needsEscape(c))
                {
                    out.append(String.format("\\u%04x", (int)c));
                }
                else
                {
                    out.append(c);
                }
            }
        }
    }
}
