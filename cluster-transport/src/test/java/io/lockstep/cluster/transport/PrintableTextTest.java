package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PrintableTextTest
{
    @Test
    void plainTextIsReturnedAsItIs()
    {
        final String plain = "refused member 2: its TLS certificate (CN=x) does not name 10.0.0.2";
        assertSame(plain, PrintableText.of(plain));
    }

    @Test
    void aPeersTextCannotStartALineMoveTheCursorOrTurnTheTextAround()
    {
        final String forged =
            "Illegal server name, name=x\n12:00:00.000 SEVERE member 0: forged\r\u001b[2J\u202Eevil\\n";
        final String printed = PrintableText.of(forged);
        assertEquals("Illegal server name, name=x\\n12:00:00.000 SEVERE member 0: forged\\r\\u001b[2J\\u202eevil\\\\n",
            printed);
        assertFalse(printed.chars().anyMatch(c -> c < 0x20), printed);
    }

    @Test
    void longTextIsCutSayingHowMuchWasLeftOut()
    {
        final String name = "x".repeat(32_000);
        final String printed = PrintableText.of("TLS failed: " + name);
        assertTrue(printed.startsWith("TLS failed: xxx"), printed);
        assertTrue(printed.endsWith("... (" + (12 + 32_000 - PrintableText.MAX_CHARS) + " more characters)"), printed);
        assertTrue(printed.length() < PrintableText.MAX_CHARS + 40, "length " + printed.length());
    }

    @Test
    void oneLineEscapesOnlyWhatCouldBreakTheLine()
    {
        assertEquals("a\\\\b\\nc", PrintableText.oneLine("a\\\\b\nc"));
    }

    @Test
    void cutLeavesTheTextAsItIsAndNeverSplitsACharacter()
    {
        final String plain = "peer sent \\x01";
        assertSame(plain, PrintableText.cut(plain, plain.length()), "short enough: the text itself, not escaped");
        assertEquals("abc... (3 more characters)", PrintableText.cut("abcdef", 3));
        final String emoji = "ab\uD83D\uDE00cd"; // a character outside the BMP at chars 2-3
        assertEquals("ab... (4 more characters)", PrintableText.cut(emoji, 3), "kept or cut whole");
        assertEquals("null", PrintableText.cut(null, 3));
    }

    @Test
    void charactersThatPrintAsNothingAreEscapedWhetherInOneCharOrTwo()
    {
        // A soft hyphen, a Hangul filler, a private-use character, a tag character (two chars), a lone surrogate.
        final String hidden = "a\u00ADb\u3164c\uE000d\uDB40\uDC41e\uD800f";
        assertEquals("a\\u00adb\\u3164c\\ue000d\\udb40\\udc41e\\ud800f", PrintableText.of(hidden));
        assertEquals(PrintableText.of(hidden), PrintableText.oneLine(hidden), "no backslash in it: the same");
        // Variation selectors, in the BMP and outside it: ignorable, and a known way to smuggle text.
        assertEquals("x\\ufe0fy\\udb40\\udd00", PrintableText.of("x\uFE0Fy\uDB40\uDD00"));
        final String smile = "ok \uD83D\uDE00";
        assertSame(smile, PrintableText.of(smile), "a visible character outside the BMP is kept as it is");
    }

    @Test
    void theCutOfEscapedTextNeverSplitsACharacter()
    {
        final String printed = PrintableText.of("ab\uD83D\uDE00cd", 3);
        assertEquals("ab... (4 more characters)", printed);
    }
}
