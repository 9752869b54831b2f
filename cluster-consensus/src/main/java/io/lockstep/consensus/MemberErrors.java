package io.lockstep.consensus;

import io.lockstep.cluster.transport.PrintableText;
import org.agrona.concurrent.EpochNanoClock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * A member's recent errors, distinct by kind and message shape, each with a count and the wall-clock times it was first
 * and last seen: what {@code tool errors} prints. Messages that differ only in their numbers (a length, an id, a
 * position) or in a peer's address are one error (see {@code shape}), shown with the latest numbers and address.
 * Bounded: at most {@link #MAX_DISTINCT} distinct errors are kept; a new one beyond that replaces the one seen longest
 * ago of the kind that holds the most, so a flood of garbage from one peer can neither grow the member's memory nor
 * push rarer evidence (a forged sender, say) out. Member thread only (recorded and read there); errors are rare, so
 * allocating here is fine.
 */
public final class MemberErrors
{
    public static final int MAX_DISTINCT = 64;
    /**
     * Every kind an error is recorded under: the words {@code tool errors} prints as {@code kind=<kind>}, each with a
     * row in the tool reference (docs/reference/tool.md, held to this set by a test). A new kind goes here first.
     */
    public static final Set<String> KINDS = Set.of(
        "connection", "identity", "member-replaced", "tls", "cluster-identity", "forged-sender", "term-out-of-range",
        "version", "malformed", "refused-append", "snapshot-refused", "disk", "lost-frames", "diverged",
        "membership", "membership-change", "removed", "untrusted-request", "client-auth", "session-open");

    /** One distinct error. */
    public record Entry(String kind, String message, long count, long firstEpochNs, long lastEpochNs)
    {
    }

    private static final class Slot
    {
        final String kind;
        /** What makes errors the same: see {@link MemberErrors#shape}. */
        final String shape;
        String message;
        long count;
        final long firstEpochNs;
        long lastEpochNs;

        Slot(final String kind, final String shape, final String message, final long nowNs)
        {
            this.kind = kind;
            this.shape = shape;
            this.message = message;
            this.firstEpochNs = nowNs;
            this.lastEpochNs = nowNs;
        }
    }

    private final EpochNanoClock wallClock;
    private final MemberMetrics metrics;
    private final ArrayList<Slot> slots = new ArrayList<>();
    private long total;

    MemberErrors(final EpochNanoClock wallClock, final MemberMetrics metrics)
    {
        this.wallClock = wallClock;
        this.metrics = metrics;
    }

    /**
     * @param kind    one of {@link #KINDS}.
     * @param text    what happened, naming the peer and the problem; kept on one line and cut to
     *                {@link PrintableText#MAX_CHARS}, because it may quote what a peer sent.
     */
    public void record(final String kind, final String text)
    {
        assert KINDS.contains(kind) : "an error kind not in MemberErrors.KINDS (nor in the tool reference): " + kind;
        final String message = PrintableText.of(text);
        final long now = wallClock.nanoTime();
        total++;
        metrics.increment(MemberMetrics.ERRORS);
        final String shape = shape(message);
        for (int i = 0; i < slots.size(); i++)
        {
            final Slot s = slots.get(i);
            if (s.kind.equals(kind) && s.shape.equals(shape))
            {
                s.count++;
                s.lastEpochNs = now;
                s.message = message;
                return;
            }
        }
        if (slots.size() >= MAX_DISTINCT)
        {
            slots.remove(oldestOfCommonestKind());
        }
        final Slot slot = new Slot(kind, shape, message, now);
        slot.count = 1;
        slots.add(slot);
    }

    private Slot oldestOfCommonestKind()
    {
        String commonest = null;
        int most = 0;
        for (int i = 0; i < slots.size(); i++)
        {
            int count = 0;
            for (int j = 0; j < slots.size(); j++)
            {
                count += slots.get(j).kind.equals(slots.get(i).kind) ? 1 : 0;
            }
            if (count > most)
            {
                most = count;
                commonest = slots.get(i).kind;
            }
        }
        Slot oldest = null;
        for (int i = 0; i < slots.size(); i++)
        {
            final Slot s = slots.get(i);
            if (s.kind.equals(commonest) && (null == oldest || s.lastEpochNs < oldest.lastEpochNs))
            {
                oldest = s;
            }
        }
        return oldest;
    }

    /**
     * The message with every run of digits as '#' and every socket address as the JDK prints it
     * ({@code /10.0.0.5:41234}, {@code /[2001:db8:0:0:0:0:0:1]:41234}) as {@code /address}: a peer's address is one
     * token whatever it holds, so that an IPv6 address's hex letters do not make each source address an error of its
     * own, which a peer with many addresses could use to push out the rest. One pass, no regular expression: a flood
     * of one peer's garbage records an error per message.
     */
    static String shape(final String message)
    {
        final StringBuilder shape = new StringBuilder(message.length());
        int i = 0;
        while (i < message.length())
        {
            final char c = message.charAt(i);
            final int afterAddress = '/' == c ? endOfAddress(message, i + 1) : -1;
            if (afterAddress > 0)
            {
                shape.append("/address");
                i = afterAddress;
                continue;
            }
            if (isDigit(c))
            {
                if (shape.length() == 0 || shape.charAt(shape.length() - 1) != '#')
                {
                    shape.append('#');
                }
            }
            else
            {
                shape.append(c);
            }
            i++;
        }
        return shape.toString();
    }

    /**
     * @return the index after a socket address starting at {@code from} (just after its '/'): an IPv4 address (digits
     * and dots) or an IPv6 one in brackets, then an optional {@code :port}; or -1 if none starts there.
     */
    private static int endOfAddress(final String text, final int from)
    {
        int i = from;
        if (i < text.length() && '[' == text.charAt(i))
        {
            i++;
            while (i < text.length() && isAddressChar(text.charAt(i)))
            {
                i++;
            }
            if (i == text.length() || ']' != text.charAt(i))
            {
                return -1;
            }
            i++;
        }
        else
        {
            while (i < text.length() && (isDigit(text.charAt(i)) || '.' == text.charAt(i)))
            {
                i++;
            }
            if (i == from)
            {
                return -1;
            }
        }
        if (i + 1 < text.length() && ':' == text.charAt(i) && isDigit(text.charAt(i + 1)))
        {
            i += 2;
            while (i < text.length() && isDigit(text.charAt(i)))
            {
                i++;
            }
        }
        return i;
    }

    private static boolean isDigit(final char c)
    {
        return c >= '0' && c <= '9';
    }

    /** Inside an IPv6 address's brackets: hex digits, ':', '.', and a zone id ('%' and word characters). */
    private static boolean isAddressChar(final char c)
    {
        return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || '_' == c || ':' == c || '.' == c ||
            '%' == c;
    }

    /**
     * @return every error recorded since start, including those no longer kept.
     */
    public long total()
    {
        return total;
    }

    /**
     * @return the distinct errors kept, most recently seen first.
     */
    public List<Entry> recent()
    {
        final List<Entry> entries = new ArrayList<>(slots.size());
        for (final Slot s : slots)
        {
            entries.add(new Entry(s.kind, s.message, s.count, s.firstEpochNs, s.lastEpochNs));
        }
        entries.sort(Comparator.comparingLong(Entry::lastEpochNs).reversed());
        return entries;
    }
}
