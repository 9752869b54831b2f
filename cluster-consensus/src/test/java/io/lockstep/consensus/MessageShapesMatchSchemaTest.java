package io.lockstep.consensus;

import io.lockstep.cluster.transport.ClientProtocolShapes;
import io.lockstep.cluster.transport.MessageShape;
import io.lockstep.cluster.transport.MessageShapes;
import org.junit.jupiter.api.Test;
import uk.co.real_logic.sbe.PrimitiveType;
import uk.co.real_logic.sbe.ir.Ir;
import uk.co.real_logic.sbe.ir.Signal;
import uk.co.real_logic.sbe.ir.Token;
import uk.co.real_logic.sbe.xml.IrGenerator;
import uk.co.real_logic.sbe.xml.ParserOptions;
import uk.co.real_logic.sbe.xml.XmlSchemaParser;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The message shapes the transports check every message against, held to the schemas they describe: for every
 * message of both wire schemas, the shape derived here from the schema's XML (with the parser that generates the
 * codecs) must equal the declared one. A field, group or version added to a schema without its shape fails here.
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

    private static void assertMatches(final String resource, final MessageShapes shapes, final Set<String> fileOnly)
        throws Exception
    {
        final Ir ir;
        try (InputStream in = MessageShapesMatchSchemaTest.class.getClassLoader().getResourceAsStream(resource))
        {
            assertNotNull(in, resource + " on the class path");
            ir = new IrGenerator().generate(XmlSchemaParser.parse(in, ParserOptions.builder()
                .stopOnError(true).suppressOutput(true).build()));
        }
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
