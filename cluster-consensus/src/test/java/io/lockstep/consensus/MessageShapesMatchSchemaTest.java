package io.lockstep.consensus;

import io.lockstep.cluster.transport.ClientProtocolShapes;
import io.lockstep.cluster.transport.FrameValidator;
import io.lockstep.cluster.transport.MessageShape;
import io.lockstep.cluster.transport.MessageShapes;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import uk.co.real_logic.sbe.PrimitiveType;
import uk.co.real_logic.sbe.ir.Ir;
import uk.co.real_logic.sbe.ir.Signal;
import uk.co.real_logic.sbe.ir.Token;
import uk.co.real_logic.sbe.xml.IrGenerator;
import uk.co.real_logic.sbe.xml.ParserOptions;
import uk.co.real_logic.sbe.xml.XmlSchemaParser;

import java.io.InputStream;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The message shapes the transports check every message against, held to the schemas they describe: for every
 * message of both wire schemas, the shape derived here from the schema's XML (with the parser that generates the
 * codecs) must equal the declared one. A field, group or version added to a schema without its shape fails here.
 * Then every message either schema allows, at every version, built here from the schema alone, must pass the check,
 * and every cut of it and every longer frame must fail.
 */
class MessageShapesMatchSchemaTest
{
    /** Member-protocol messages kept in files only (election.state, log.base): never accepted from a connection. */
    private static final Set<String> FILE_ONLY = Set.of("ElectionState", "LogBase");

    @Test
    void clientProtocolShapesMatchItsSchema() throws Exception
    {
        assertMatches("client-protocol.xml", ClientProtocolShapes.create(), Set.of());
    }

    @Test
    void memberProtocolShapesMatchItsSchema() throws Exception
    {
        assertMatches("member-protocol.xml", MemberProtocolShapes.create(), FILE_ONLY);
    }

    @Test
    void everyMessageEitherSchemaAllowsPassesTheCheckAndEveryCutOfItFails() throws Exception
    {
        final FrameValidator validator = new FrameValidator(MemberProtocolShapes.create());
        final Random random = new Random(7);
        int messages = 0;
        for (final String resource : List.of("client-protocol.xml", "member-protocol.xml"))
        {
            final Ir ir = parse(resource);
            for (final List<Token> tokens : ir.messages())
            {
                final Token message = tokens.get(0);
                if (FILE_ONLY.contains(message.name()))
                {
                    continue;
                }
                for (int version = 1; version <= ir.version(); version++)
                {
                    for (int round = 0; round < 4; round++)
                    {
                        final ExpandableArrayBuffer out = new ExpandableArrayBuffer();
                        final int blockLength = minBlock(tokens, 1, tokens.size() - 1, version);
                        out.putShort(0, (short)blockLength, ByteOrder.LITTLE_ENDIAN);
                        out.putShort(2, (short)message.id(), ByteOrder.LITTLE_ENDIAN);
                        out.putShort(4, (short)ir.id(), ByteOrder.LITTLE_ENDIAN);
                        out.putShort(6, (short)version, ByteOrder.LITTLE_ENDIAN);
                        final int length = build(tokens, 1, tokens.size() - 1, blockLength, version, random, out, 8);
                        final String name = message.name() + " v" + version + " (" + length + " bytes)";
                        assertTrue(validator.isValid(out, 0, length), name + ": " + validator.reason());
                        for (int cut = 0; cut < length; cut++)
                        {
                            assertFalse(validator.isValid(out, 0, cut), name + " cut at " + cut);
                        }
                        out.putByte(length, (byte)0);
                        assertFalse(validator.isValid(out, 0, length + 1), name + " with a byte after it");
                        messages++;
                    }
                }
            }
        }
        assertTrue(messages > 100, "messages built: " + messages);
    }

    /**
     * Writes a message's block (zeros), then its groups (0 to 3 entries) and variable-length fields (0 to 20
     * bytes), as the schema lays them out for that version.
     *
     * @return where the message ends.
     */
    private static int build(
        final List<Token> tokens,
        final int from,
        final int to,
        final int blockLength,
        final int version,
        final Random random,
        final ExpandableArrayBuffer out,
        final int at)
    {
        out.setMemory(at, blockLength, (byte)0);
        int limit = at + blockLength;
        for (int i = from; i < to; i += tokens.get(i).componentTokenCount())
        {
            final Token token = tokens.get(i);
            if (token.version() > version)
            {
                continue;
            }
            if (Signal.BEGIN_GROUP == token.signal())
            {
                final int entryStart = i + 1 + tokens.get(i + 1).componentTokenCount();
                final int entryEnd = i + token.componentTokenCount() - 1;
                final int entryBlock = minBlock(tokens, entryStart, entryEnd, version);
                final int count = random.nextInt(4);
                out.putShort(limit, (short)entryBlock, ByteOrder.LITTLE_ENDIAN);
                out.putShort(limit + 2, (short)count, ByteOrder.LITTLE_ENDIAN);
                limit += 4;
                for (int entry = 0; entry < count; entry++)
                {
                    limit = build(tokens, entryStart, entryEnd, entryBlock, version, random, out, limit);
                }
            }
            else if (Signal.BEGIN_VAR_DATA == token.signal())
            {
                final int length = random.nextInt(21);
                out.putInt(limit, length, ByteOrder.LITTLE_ENDIAN);
                out.setMemory(limit + 4, length, (byte)'x');
                limit += 4 + length;
            }
        }
        return limit;
    }

    private static int minBlock(final List<Token> tokens, final int from, final int to, final int version)
    {
        int min = 0;
        for (int i = from; i < to; i += tokens.get(i).componentTokenCount())
        {
            final Token token = tokens.get(i);
            if (Signal.BEGIN_FIELD == token.signal() && token.version() <= version)
            {
                min = Math.max(min, token.offset() + tokens.get(i + 1).encodedLength());
            }
        }
        return min;
    }

    private static Ir parse(final String resource) throws Exception
    {
        try (InputStream in = MessageShapesMatchSchemaTest.class.getClassLoader().getResourceAsStream(resource))
        {
            assertNotNull(in, resource + " on the class path");
            return new IrGenerator().generate(XmlSchemaParser.parse(in, ParserOptions.builder()
                .stopOnError(true).suppressOutput(true).build()));
        }
    }

    private static void assertMatches(final String resource, final MessageShapes shapes, final Set<String> fileOnly)
        throws Exception
    {
        final Ir ir = parse(resource);
        assertEquals(ir.version(), shapes.newestVersion(ir.id()), "newest version read of schema " + ir.id());
        final TreeMap<String, String> mismatches = new TreeMap<>();
        int checked = 0;
        for (final List<Token> tokens : ir.messages())
        {
            final Token message = tokens.get(0);
            final MessageShape declared = shapes.shape(ir.id(), message.id());
            if (fileOnly.contains(message.name()))
            {
                assertNull(declared, message.name() + " is kept in a file and never accepted from a connection");
                continue;
            }
            final String derived = shape(tokens, 1, tokens.size() - 1, message.encodedLength(), ir.version());
            if (null == declared || !derived.equals(declared.toString()))
            {
                mismatches.put(message.name(), "schema says " + derived + ", declared " + declared);
            }
            checked++;
        }
        assertEquals(new TreeMap<String, String>(), mismatches, resource);
        assertEquals(ir.messages().size() - fileOnly.size(), checked);
    }

    /**
     * The shape of the block, groups and variable-length fields between from (inclusive) and to (exclusive), in
     * the form {@link MessageShape#toString()} prints.
     */
    private static String shape(
        final List<Token> tokens, final int from, final int to, final int blockLength, final int newestVersion)
    {
        final List<int[]> fieldEnds = new ArrayList<>();
        final StringBuilder parts = new StringBuilder();
        for (int i = from; i < to; i += tokens.get(i).componentTokenCount())
        {
            final Token token = tokens.get(i);
            if (Signal.BEGIN_FIELD == token.signal())
            {
                fieldEnds.add(new int[]{token.version(), token.offset() + tokens.get(i + 1).encodedLength()});
            }
            else if (Signal.BEGIN_GROUP == token.signal())
            {
                final Token dimensions = tokens.get(i + 1);
                assertEquals(4, dimensions.encodedLength(), "group header of " + token.name());
                final int entryStart = i + 1 + dimensions.componentTokenCount();
                parts.append(" group(v").append(token.version()).append(") {")
                    .append(shape(tokens, entryStart, i + token.componentTokenCount() - 1, token.encodedLength(),
                        newestVersion))
                    .append('}');
            }
            else if (Signal.BEGIN_VAR_DATA == token.signal())
            {
                final Token lengthField = tokens.get(i + 2);
                assertEquals(PrimitiveType.UINT32, lengthField.encoding().primitiveType(), token.name());
                parts.append(" var(v").append(token.version()).append(", max ")
                    .append(lengthField.encoding().applicableMaxValue().longValue()).append(')');
            }
        }
        final StringBuilder block = new StringBuilder("block[");
        int previous = -1;
        for (int version = 0; version <= newestVersion; version++)
        {
            int min = 0;
            for (final int[] field : fieldEnds)
            {
                if (field[0] <= version)
                {
                    min = Math.max(min, field[1]);
                }
            }
            if (min != previous)
            {
                block.append(previous < 0 ? "" : ", ").append('v').append(version).append(':').append(min);
                previous = min;
            }
        }
        assertEquals(blockLength, previous, "the newest version's fields fill the block");
        return block.append(']').append(parts).toString();
    }
}
