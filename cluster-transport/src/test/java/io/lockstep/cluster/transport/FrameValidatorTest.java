package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.EgressEncoder;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.HelloReplyEncoder;
import io.lockstep.cluster.codecs.IngressAckEncoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.KeepAliveEncoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionCloseRequestEncoder;
import io.lockstep.cluster.codecs.SessionConnectEncoder;
import io.lockstep.cluster.codecs.SessionEventCode;
import io.lockstep.cluster.codecs.SessionEventEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameValidatorTest
{
    private final FrameValidator validator = new FrameValidator(ClientProtocolShapes.create());
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();

    @Test
    void everyWholeMessageOfTheClientProtocolPasses()
    {
        for (final UnsafeBuffer message : clientMessages())
        {
            assertTrue(validator.isValid(message, 0, message.capacity()), validator.reason());
            assertNull(validator.reason());
        }
    }

    @Test
    void aMessageCutAtAnyLengthFails()
    {
        for (final UnsafeBuffer message : clientMessages())
        {
            for (int cut = 0; cut < message.capacity(); cut++)
            {
                // The bytes after the cut stay in the buffer, as a coalesced next message would: the check must
                // look at the frame's length, not at what the buffer happens to hold.
                assertFalse(validator.isValid(message, 0, cut), "template " + message.getShort(2) + " cut at " +
                    cut + " of " + message.capacity());
            }
        }
    }

    @Test
    void aMessageWithBytesAfterItsLastFieldFails()
    {
        for (final UnsafeBuffer message : clientMessages())
        {
            final UnsafeBuffer longer = new UnsafeBuffer(new byte[message.capacity() + 3]);
            longer.putBytes(0, message, 0, message.capacity());
            assertFalse(validator.isValid(longer, 0, longer.capacity()));
            assertTrue(validator.reason().contains("3 bytes after its last field"), validator.reason());
        }
    }

    @Test
    void aBlockShorterThanItsVersionsFieldsFailsAndAnOlderVersionsShorterBlockPasses()
    {
        final UnsafeBuffer proof = encode(new HelloProofEncoder().wrapAndApplyHeader(buffer(), 0, header)
            .putProof(new byte[32], 0, 32).encodedLength());
        final UnsafeBuffer shortProof = new UnsafeBuffer(new byte[16]);
        shortProof.putBytes(0, proof, 0, 16);
        shortProof.putShort(0, (short)8, ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(shortProof, 0, 16));
        assertTrue(validator.reason().contains("shorter than the 32 its fields take"), validator.reason());

        // A version-1 Hello had no authentication flag or nonce: its 8-byte block is whole.
        final UnsafeBuffer helloV1 = new UnsafeBuffer(new byte[16]);
        helloV1.putShort(0, (short)8, ByteOrder.LITTLE_ENDIAN);
        helloV1.putShort(2, (short)HelloEncoder.TEMPLATE_ID, ByteOrder.LITTLE_ENDIAN);
        helloV1.putShort(4, (short)HelloEncoder.SCHEMA_ID, ByteOrder.LITTLE_ENDIAN);
        helloV1.putShort(6, (short)1, ByteOrder.LITTLE_ENDIAN);
        assertTrue(validator.isValid(helloV1, 0, 16), validator.reason());
        helloV1.putShort(6, (short)2, ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(helloV1, 0, 16), "version 2 added 17 bytes to the block");
    }

    @Test
    void aLongerBlockThanTheSchemasPassesWhenTheFrameHoldsIt()
    {
        // SBE lets a block grow: a decoder skips what it does not know, by the declared block length.
        final UnsafeBuffer keepAlive = encode(new KeepAliveEncoder().wrapAndApplyHeader(buffer(), 0, header)
            .sessionId(1).lastEgressSequence(2).encodedLength());
        final UnsafeBuffer longer = new UnsafeBuffer(new byte[keepAlive.capacity() + 8]);
        longer.putBytes(0, keepAlive, 0, keepAlive.capacity());
        longer.putShort(0, (short)(KeepAliveEncoder.BLOCK_LENGTH + 8), ByteOrder.LITTLE_ENDIAN);
        assertTrue(validator.isValid(longer, 0, longer.capacity()), validator.reason());
        assertFalse(validator.isValid(longer, 0, keepAlive.capacity()), "the longer block runs past the frame");
    }

    @Test
    void variableLengthFieldsMustFitTheFrameAndTheirBound()
    {
        final UnsafeBuffer ingress = encode(new IngressEncoder().wrapAndApplyHeader(buffer(), 0, header)
            .sessionId(1).sequence(1).putPayload(new byte[100], 0, 100).encodedLength());
        final int lengthAt = MessageHeaderEncoder.ENCODED_LENGTH + IngressEncoder.BLOCK_LENGTH;
        for (final long fieldLength : new long[]{101, 0xFFFF_FFFFL, 0x8000_0000L, 16 * 1024 * 1024 + 1})
        {
            ingress.putInt(lengthAt, (int)fieldLength, ByteOrder.LITTLE_ENDIAN);
            assertFalse(validator.isValid(ingress, 0, ingress.capacity()), "field length " + fieldLength);
        }
        ingress.putInt(lengthAt, 99, ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(ingress, 0, ingress.capacity()), "a field shorter than the frame leaves bytes");
    }

    @Test
    void unknownSchemasTemplatesAndNewerVersionsFail()
    {
        final UnsafeBuffer keepAlive = encode(new KeepAliveEncoder().wrapAndApplyHeader(buffer(), 0, header)
            .sessionId(1).lastEgressSequence(2).encodedLength());
        keepAlive.putShort(6, (short)(MessageHeaderEncoder.SCHEMA_VERSION + 1), ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(keepAlive, 0, keepAlive.capacity()));
        assertTrue(validator.reason().contains("is newer than"), validator.reason());
        keepAlive.putShort(6, (short)MessageHeaderEncoder.SCHEMA_VERSION, ByteOrder.LITTLE_ENDIAN);
        keepAlive.putShort(2, (short)99, ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(keepAlive, 0, keepAlive.capacity()));
        assertTrue(validator.reason().startsWith("unknown message: template 99"), validator.reason());
        keepAlive.putShort(4, (short)999, ByteOrder.LITTLE_ENDIAN);
        assertFalse(validator.isValid(keepAlive, 0, keepAlive.capacity()));
        assertEquals("unknown schema id 999", validator.reason());
    }

    @Test
    void groupsAreWalkedEntryByEntryWithTheirOwnFields()
    {
        final int schema = 7;
        final FrameValidator groups = new FrameValidator(new MessageShapes().schema(schema, 1, "test.codecs")
            .message(schema, 1, MessageShape.block(4).group(0, MessageShape.block(8).varData(100)).varData(10)));
        final UnsafeBuffer m = new UnsafeBuffer(new byte[256]);
        m.putShort(0, (short)4, ByteOrder.LITTLE_ENDIAN);
        m.putShort(2, (short)1, ByteOrder.LITTLE_ENDIAN);
        m.putShort(4, (short)schema, ByteOrder.LITTLE_ENDIAN);
        m.putShort(6, (short)1, ByteOrder.LITTLE_ENDIAN);
        int at = 12;
        m.putShort(at, (short)8, ByteOrder.LITTLE_ENDIAN);
        m.putShort(at + 2, (short)2, ByteOrder.LITTLE_ENDIAN);
        at += 4;
        for (int entry = 0; entry < 2; entry++)
        {
            at += 8;
            m.putInt(at, 5, ByteOrder.LITTLE_ENDIAN);
            at += 4 + 5;
        }
        m.putInt(at, 3, ByteOrder.LITTLE_ENDIAN);
        at += 4 + 3;
        assertTrue(groups.isValid(m, 0, at), groups.reason());
        m.putShort(14, (short)3, ByteOrder.LITTLE_ENDIAN);
        assertFalse(groups.isValid(m, 0, at), "three entries declared, two sent");
        m.putShort(14, (short)2, ByteOrder.LITTLE_ENDIAN);
        m.putShort(12, (short)7, ByteOrder.LITTLE_ENDIAN);
        assertFalse(groups.isValid(m, 0, at), "entries shorter than their fields");
        m.putShort(12, (short)8, ByteOrder.LITTLE_ENDIAN);
        m.putShort(14, (short)0xFFFF, ByteOrder.LITTLE_ENDIAN);
        assertFalse(groups.isValid(m, 0, at), "a count the frame cannot hold");
    }

    @Test
    void randomBytesNeverMakeTheCheckThrow()
    {
        final Random random = new Random(42);
        final UnsafeBuffer bytes = new UnsafeBuffer(new byte[512]);
        final List<UnsafeBuffer> seeds = clientMessages();
        int passed = 0;
        for (int i = 0; i < 200_000; i++)
        {
            final int length;
            if (random.nextBoolean())
            {
                // A real message with a few bytes changed, most often in its header or a length field.
                final UnsafeBuffer seed = seeds.get(random.nextInt(seeds.size()));
                bytes.putBytes(0, seed, 0, seed.capacity());
                for (int flips = 1 + random.nextInt(3); flips > 0; flips--)
                {
                    bytes.putByte(random.nextInt(Math.min(seed.capacity(), 40)), (byte)random.nextInt(256));
                }
                length = random.nextInt(5) == 0 ? random.nextInt(seed.capacity() + 8) : seed.capacity();
            }
            else
            {
                random.nextBytes(bytes.byteArray());
                length = random.nextInt(bytes.capacity());
            }
            if (validator.isValid(bytes, 0, length))
            {
                passed++;
            }
            else
            {
                assertTrue(validator.reason().length() > 0);
            }
        }
        assertTrue(passed > 0, "some mutated messages are still whole (a changed value, not a changed length)");
    }

    private List<UnsafeBuffer> clientMessages()
    {
        final List<UnsafeBuffer> all = new ArrayList<>();
        final byte[] bytes = new byte[40];
        all.add(encode(new HelloEncoder().wrapAndApplyHeader(buffer(), 0, header).memberId(-1).segmentLength(0)
            .putNonce(new byte[16], 0, 16).encodedLength()));
        all.add(encode(new HelloReplyEncoder().wrapAndApplyHeader(buffer(), 0, header).memberId(1)
            .putNonce(new byte[16], 0, 16).putProof(new byte[32], 0, 32).encodedLength()));
        all.add(encode(new HelloProofEncoder().wrapAndApplyHeader(buffer(), 0, header)
            .putProof(new byte[32], 0, 32).encodedLength()));
        all.add(encode(new SessionConnectEncoder().wrapAndApplyHeader(buffer(), 0, header).correlationId(1)
            .resumeSessionId(-1).lastEgressSequence(-1).putCredentials(bytes, 0, 40).encodedLength()));
        all.add(encode(new SessionEventEncoder().wrapAndApplyHeader(buffer(), 0, header).correlationId(1)
            .sessionId(2).code(SessionEventCode.OK).leaderId(0).appliedSequence(0).leaderTerm(1).detail("ok")
            .encodedLength()));
        all.add(encode(new IngressEncoder().wrapAndApplyHeader(buffer(), 0, header).sessionId(1).sequence(1)
            .putPayload(bytes, 0, 40).encodedLength()));
        all.add(encode(new IngressAckEncoder().wrapAndApplyHeader(buffer(), 0, header).sessionId(1)
            .appliedSequence(1).leaderTerm(1).encodedLength()));
        all.add(encode(new EgressEncoder().wrapAndApplyHeader(buffer(), 0, header).sessionId(1).sequence(1)
            .putPayload(bytes, 0, 0).encodedLength()));
        all.add(encode(new KeepAliveEncoder().wrapAndApplyHeader(buffer(), 0, header).sessionId(1)
            .lastEgressSequence(1).encodedLength()));
        all.add(encode(new SessionCloseRequestEncoder().wrapAndApplyHeader(buffer(), 0, header).sessionId(1)
            .encodedLength()));
        return all;
    }

    private UnsafeBuffer scratch;

    private UnsafeBuffer buffer()
    {
        scratch = new UnsafeBuffer(new byte[1024]);
        return scratch;
    }

    private UnsafeBuffer encode(final int bodyLength)
    {
        final byte[] copy = new byte[MessageHeaderEncoder.ENCODED_LENGTH + bodyLength];
        scratch.getBytes(0, copy);
        return new UnsafeBuffer(copy);
    }
}
