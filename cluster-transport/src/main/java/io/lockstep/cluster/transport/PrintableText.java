package io.lockstep.cluster.transport;

/**
 * Text that may hold a peer's bytes, made safe to print on one line: an exception's message can carry what a peer
 * sent (the JDK's TLS code quotes a malformed server name whole, up to its 32 KiB handshake bound), and a log line or
 * a {@code tool errors} line built from it must not be able to start a forged line of its own, move the terminal's
 * cursor, reverse the text's direction, hide characters, or run to megabytes. Control characters, line and paragraph
 * separators, bidirectional overrides and characters that print as nothing (format characters such as zero-width ones
 * and tags, blank fillers, private-use and unassigned ones) become {@code \n}, {@code \r}, {@code \t} or
 * {@code \}{@code uXXXX}; a backslash is doubled, so that what was escaped can be told from what was sent; and the
 * text is cut to a bound, saying how much was left out.
 */
public final class PrintableText
{
    /** Longest text kept from any one problem: enough for every message Lockstep writes itself. */
    public static final int MAX_CHARS = 400;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private PrintableText()
    {
    }

    /**
     * @param text     any text, or null.
     * @param maxChars longest result before the note of what was cut, about (an escape at the bound is kept whole;
     *                 at least 1).
     * @return the text on one line, escaped and cut; the text itself if it needs neither.
     */
    public static String of(final String text, final int maxChars)
    {
        if (null == text)
        {
            return "null";
        }
        if (text.length() <= maxChars && isPlain(text))
        {
            return text;
        }
        final StringBuilder out = new StringBuilder(Math.min(text.length(), maxChars) + 48);
        int i = 0;
        for (; i < text.length() && out.length() < maxChars; i++)
        {
            appendEscaped(out, text, i);
        }
        if (i < text.length() && Character.isHighSurrogate(out.charAt(out.length() - 1)))
        {
            out.setLength(out.length() - 1); // a character is kept or cut whole
            i--;
        }
        if (i < text.length())
        {
            appendCutNote(out, text.length() - i);
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
        return appendCutNote(new StringBuilder(keep + 32).append(text, 0, keep), text.length() - keep).toString();
    }

    private static StringBuilder appendCutNote(final StringBuilder out, final int charsLeftOut)
    {
        return out.append("... (").append(charsLeftOut).append(" more characters)");
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
     * arrives: the characters {@link #of(String)} escapes are escaped, but a backslash is not doubled and nothing is
     * cut, so that a sender of another version cannot start a line or hide text either.
     *
     * @param text any text.
     * @return the text with only those characters escaped.
     */
    public static String oneLine(final String text)
    {
        int first = 0;
        while (first < text.length() && !needsEscape(text, first))
        {
            first++;
        }
        if (first == text.length())
        {
            return text;
        }
        final StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, first);
        for (int i = first; i < text.length(); i++)
        {
            if (needsEscape(text, i))
            {
                appendEscaped(out, text, i);
            }
            else
            {
                out.append(text.charAt(i));
            }
        }
        return out.toString();
    }

    private static boolean isPlain(final String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            if (text.charAt(i) == '\\' || needsEscape(text, i))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return true if the char at {@code i} is escaped: a control character, a separator, a direction override, or
     * a character that prints as nothing (a format character such as a soft hyphen or a zero-width space, a blank
     * filler, a private-use or unassigned one); each half of a surrogate pair as the character they make, and a
     * surrogate without its other half always.
     */
    private static boolean needsEscape(final String text, final int i)
    {
        final char c = text.charAt(i);
        if (!Character.isSurrogate(c))
        {
            return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == '\u2028' || c == '\u2029' || c == '\u034F' ||
                c == '\u115F' || c == '\u1160' || c == '\u3164' || c == '\uFFA0' || isInvisible(c);
        }
        final int pairedAt = Character.isHighSurrogate(c) ? i + 1 : i - 1;
        if (pairedAt < 0 || pairedAt >= text.length())
        {
            return true;
        }
        final char other = text.charAt(pairedAt);
        final boolean paired = Character.isHighSurrogate(c) ? Character.isLowSurrogate(other) :
            Character.isHighSurrogate(other);
        return !paired || isInvisible(Character.isHighSurrogate(c) ? Character.toCodePoint(c, other) :
            Character.toCodePoint(other, c));
    }

    /**
     * Format characters (direction marks and overrides, zero-width ones, tags), variation selectors and the other
     * marks Unicode lists as ignorable, private-use and unassigned ones.
     */
    private static boolean isInvisible(final int codePoint)
    {
        final int type = Character.getType(codePoint);
        return type == Character.FORMAT || type == Character.PRIVATE_USE || type == Character.UNASSIGNED ||
            (codePoint >= 0xFE00 && codePoint <= 0xFE0F) || (codePoint >= 0xE0100 && codePoint <= 0xE01EF) ||
            (codePoint >= 0x180B && codePoint <= 0x180F) || codePoint == 0x17B4 || codePoint == 0x17B5;
    }

    private static void appendEscaped(final StringBuilder out, final String text, final int i)
    {
        final char c = text.charAt(i);
        switch (c)
        {
            case '\\' -> out.append("\\\\");
            case '\n' -> out.append("\\n");
            case '\r' -> out.append("\\r");
            case '\t' -> out.append("\\t");
            default ->
            {
                if (needsEscape(text, i))
                {
                    // By hand, not String.format: a flood of control characters escapes hundreds per message.
                    out.append("\\u").append(HEX[(c >> 12) & 0xF]).append(HEX[(c >> 8) & 0xF])
                        .append(HEX[(c >> 4) & 0xF]).append(HEX[c & 0xF]);
                }
                else
                {
                    out.append(c);
                }
            }
        }
    }
}
