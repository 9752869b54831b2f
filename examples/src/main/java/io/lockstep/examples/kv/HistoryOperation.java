package io.lockstep.examples.kv;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One operation of a key-value client's history, as one JSON line:
 * {@code
 * {"client":3,"op":"cas","key":"k1","expected":"v7","value":"v8","call":123,"return":456,"status":"ok",
 * "output":"true"}}.
 * Status {@code ok}: completed with this output; {@code fail}: definitely not applied; {@code info}: outcome unknown
 * (it may have taken effect at any time after its call, or never). A get of a missing key outputs {@code ""}.
 *
 * @param client   client id.
 * @param op       get, put or cas.
 * @param key      the key.
 * @param expected for cas: the value it expects, or null.
 * @param value    for put and cas: the value written, or null.
 * @param call     nanoseconds when the client sent it.
 * @param ret      nanoseconds when the client learned the outcome (for info: when it gave up).
 * @param status   ok, fail or info.
 * @param output   for get: the value read; for cas: "true" or "false"; else null.
 */
public record HistoryOperation(
    int client, String op, String key, String expected, String value, long call, long ret, String status, String output)
{
    /**
     * @return the JSON line.
     */
    public String toJson()
    {
        final StringBuilder sb = new StringBuilder(128).append("{\"client\":").append(client)
            .append(",\"op\":").append(quote(op)).append(",\"key\":").append(quote(key));
        if (null != expected)
        {
            sb.append(",\"expected\":").append(quote(expected));
        }
        if (null != value)
        {
            sb.append(",\"value\":").append(quote(value));
        }
        sb.append(",\"call\":").append(call).append(",\"return\":").append(ret)
            .append(",\"status\":").append(quote(status));
        if (null != output)
        {
            sb.append(",\"output\":").append(quote(output));
        }
        return sb.append('}').toString();
    }

    /**
     * @param line a JSON line as {@link #toJson()} writes it (flat object, string and integer values).
     * @return the operation.
     * @throws IllegalArgumentException naming what is wrong with the line.
     */
    public static HistoryOperation parse(final String line)
    {
        final Map<String, String> fields = new LinkedHashMap<>();
        int i = skipSpaces(line, 0);
        expect(line, i++, '{');
        while (true)
        {
            i = skipSpaces(line, i);
            if (i < line.length() && line.charAt(i) == '}')
            {
                break;
            }
            final int[] end = new int[1];
            final String name = readString(line, i, end);
            i = skipSpaces(line, end[0]);
            expect(line, i++, ':');
            i = skipSpaces(line, i);
            final String value;
            if (i < line.length() && line.charAt(i) == '"')
            {
                value = readString(line, i, end);
                i = end[0];
            }
            else
            {
                final int start = i;
                while (i < line.length() && (Character.isDigit(line.charAt(i)) || line.charAt(i) == '-'))
                {
                    i++;
                }
                if (start == i)
                {
                    throw new IllegalArgumentException("expected a string or number at " + start + ": " + line);
                }
                value = line.substring(start, i);
            }
            fields.put(name, value);
            i = skipSpaces(line, i);
            if (i < line.length() && line.charAt(i) == ',')
            {
                i++;
            }
        }
        try
        {
            return new HistoryOperation(Integer.parseInt(required(fields, "client", line)), required(fields, "op",
                line),
                required(fields, "key", line), fields.get("expected"), fields.get("value"),
                Long.parseLong(required(fields, "call", line)), Long.parseLong(required(fields, "return", line)),
                required(fields, "status", line), fields.get("output"));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("bad number in: " + line);
        }
    }

    private static String required(final Map<String, String> fields, final String name, final String line)
    {
        final String value = fields.get(name);
        if (null == value)
        {
            throw new IllegalArgumentException("missing \"" + name + "\" in: " + line);
        }
        return value;
    }

    private static String readString(final String s, final int start, final int[] end)
    {
        expect(s, start, '"');
        final StringBuilder sb = new StringBuilder();
        int i = start + 1;
        while (i < s.length() && s.charAt(i) != '"')
        {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length())
            {
                c = s.charAt(++i);
            }
            sb.append(c);
            i++;
        }
        expect(s, i, '"');
        end[0] = i + 1;
        return sb.toString();
    }

    private static int skipSpaces(final String s, final int from)
    {
        int i = from;
        while (i < s.length() && Character.isWhitespace(s.charAt(i)))
        {
            i++;
        }
        return i;
    }

    private static void expect(final String s, final int i, final char c)
    {
        if (i >= s.length() || s.charAt(i) != c)
        {
            throw new IllegalArgumentException("expected '" + c + "' at " + i + ": " + s);
        }
    }

    private static String quote(final String s)
    {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
