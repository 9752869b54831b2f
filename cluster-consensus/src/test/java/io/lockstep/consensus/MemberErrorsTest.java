package io.lockstep.consensus;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemberErrorsTest
{
    private long nowNs = 1;
    private final MemberErrors errors = new MemberErrors(() -> nowNs++, new MemberMetrics());

    @Test
    void messagesThatDifferOnlyInTheirNumbersAreOneErrorShowingTheLatest()
    {
        for (int length = 1; length <= 100; length++)
        {
            errors.record("connection", "bad message length " + (length * 7919));
        }
        final List<MemberErrors.Entry> recent = errors.recent();
        assertEquals(1, recent.size(), recent.toString());
        assertEquals(100, recent.get(0).count());
        assertEquals("bad message length 791900", recent.get(0).message());
    }

    @Test
    void aFloodOfOneKindEvictsOnlyThatKindSoRareEvidenceStays()
    {
        errors.record("forged-sender", "dropped a vote from member 1 that names member 2 as its sender");
        for (int i = 0; i < 1000; i++)
        {
            // Distinct shapes, as varied garbage makes them.
            errors.record("connection", "garbage " + Integer.toString(i, 26).replaceAll("[0-9]", "x") + " from peer");
        }
        final List<MemberErrors.Entry> recent = errors.recent();
        assertEquals(MemberErrors.MAX_DISTINCT, recent.size());
        assertTrue(recent.stream().anyMatch(e -> e.kind().equals("forged-sender")), "the forged sender is kept");
        assertEquals(1001, errors.total());
    }

    @Test
    void aMessageQuotingAPeerIsKeptOnOneLineAndCut()
    {
        // The JDK's TLS code quotes a malformed server name whole: 32 KiB of the peer's choosing, newlines included.
        errors.record("connection",
            "TLS failed: Illegal server name, name=x\nmember=2 status=down" + "y".repeat(32_000));
        final String kept = errors.recent().get(0).message();
        assertTrue(kept.startsWith("TLS failed: Illegal server name, name=x\\nmember=2 status=down"), kept);
        assertTrue(kept.indexOf('\n') < 0, kept);
        assertTrue(kept.length() < 500, "kept " + kept.length() + " characters");
    }

    @Test
    void theErrorsResponseCutsAMessageByItsBytesAtACharacter()
    {
        final byte[] ascii = AdminRequests.utf8Within("x".repeat(1000), AdminRequests.MAX_ERROR_MESSAGE_BYTES);
        assertEquals(AdminRequests.MAX_ERROR_MESSAGE_BYTES, ascii.length);
        // Three bytes a character: cut where a character starts, never inside one.
        final byte[] wide = AdminRequests.utf8Within("\uFFFD".repeat(400), AdminRequests.MAX_ERROR_MESSAGE_BYTES);
        assertTrue(wide.length <= AdminRequests.MAX_ERROR_MESSAGE_BYTES, "bytes " + wide.length);
        final String decoded = new String(wide, StandardCharsets.UTF_8);
        assertTrue(decoded.endsWith("\uFFFD..."), decoded);
        assertEquals("short", new String(AdminRequests.utf8Within("short", 480), StandardCharsets.UTF_8));
    }

    @Test
    void everySourceAddressIsOneShapeIPv6Included()
    {
        for (int i = 0; i < 200; i++)
        {
            errors.record("identity", "a peer claiming to be member 1 from /[2001:db8:0:0:ab:cd:" +
                Integer.toHexString(0xa000 + i) + ":1]:4" + i + " closed the connection before proving the member " +
                "secret");
            errors.record("connection", "bad message length 7 (from /10.0.0." + (i % 250) + ":5" + i + ")");
        }
        assertEquals(2, errors.recent().size(), errors.recent().toString());
    }

    @Test
    void theShapeIsTheMessageWithItsNumbersAndAddressesReplaced()
    {
        assertEquals("refused /address: length # over #",
            MemberErrors.shape("refused /10.0.0.5:41234: length 9 over 8"));
        assertEquals("from /address)", MemberErrors.shape("from /[fe80::1%eth0]:7000)"));
        assertEquals("/address and /[unclosed #", MemberErrors.shape("/1.2.3.4 and /[unclosed 12"));
        assertEquals("a/b /:# /address:x", MemberErrors.shape("a/b /:80 /9:x"));

        // The same as the regular expression it replaced, on text made of the characters that matter to it, letters
        // and digits of other scripts included (an address is ASCII). The oracle's digit rule is simpler than
        // shape()'s (a '#' already in the text would differ), which is why the alphabet has no '#'.
        final Pattern address = Pattern.compile("/(\\[[0-9A-Fa-f:.%\\w]*\\]|[0-9.]+)(:\\d+)?");
        final String alphabet = "/[]:.%_09afAFzZ -\u00e9\u0663";
        final Random random = new Random(42);
        for (int n = 0; n < 20_000; n++)
        {
            final StringBuilder text = new StringBuilder();
            for (int i = random.nextInt(24); i > 0; i--)
            {
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            final String expected = address.matcher(text).replaceAll("/address").replaceAll("[0-9]+", "#");
            assertEquals(expected, MemberErrors.shape(text.toString()), "shape of \"" + text + "\"");
        }
    }
}
