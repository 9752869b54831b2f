package io.lockstep.itests;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.HelloReplyEncoder;
import io.lockstep.cluster.codecs.KeepAliveEncoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionConnectEncoder;
import io.lockstep.consensus.codecs.ConfigurationNoticeEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Messages an attacker on the network sends members, framed as the transport frames them (an int32 length, then the
 * SBE message): the pieces the fuzzer and the attack tests put together.
 */
final class HostileBytes
{
    /** A member's read buffer before the handshake is done. */
    static final int PRE_HANDSHAKE_BUFFER = 8 * 1024;

    private HostileBytes()
    {
    }

    /**
     * The message that once stopped a member from outside, without the secret: an authenticating Hello that fills
     * the pre-handshake read buffer, and in the same write a HelloProof whose length prefix covers only its 8-byte
     * header, so that reading the proof ran past the end of the buffer.
     */
    static byte[] helloFillingThePreHandshakeBufferThenAShortProof()
    {
        final byte[] proofHeaderOnly = new byte[MessageHeaderEncoder.ENCODED_LENGTH];
        System.arraycopy(helloProof(new byte[32]), 0, proofHeaderOnly, 0, proofHeaderOnly.length);
        final byte[] paddedHello = new byte[PRE_HANDSHAKE_BUFFER - 4 - 4 - proofHeaderOnly.length];
        final byte[] hello = hello(-1, true);
        System.arraycopy(hello, 0, paddedHello, 0, hello.length);
        final byte[] first = frame(paddedHello);
        final byte[] second = frame(proofHeaderOnly);
        final byte[] both = new byte[first.length + second.length];
        System.arraycopy(first, 0, both, 0, first.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    static byte[] hello(final int memberId, final boolean authenticate)
    {
        final UnsafeBuffer buffer = buffer();
        final int length = new HelloEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .memberId(memberId).segmentLength(1 << 20)
            .authenticate(authenticate ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(new byte[16], 0, 16).encodedLength();
        return bytes(buffer, length);
    }

    static byte[] helloReply(final int memberId)
    {
        final UnsafeBuffer buffer = buffer();
        final int length = new HelloReplyEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .memberId(memberId).authenticate(BooleanFlag.TRUE).putNonce(new byte[16], 0, 16)
            .putProof(new byte[32], 0, 32).encodedLength();
        return bytes(buffer, length);
    }

    static byte[] helloProof(final byte[] proof)
    {
        final UnsafeBuffer buffer = buffer();
        final int length = new HelloProofEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .putProof(proof, 0, 32).encodedLength();
        return bytes(buffer, length);
    }

    static byte[] keepAlive(final long sessionId)
    {
        final UnsafeBuffer buffer = buffer();
        final int length = new KeepAliveEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .sessionId(sessionId).lastEgressSequence(0).encodedLength();
        return bytes(buffer, length);
    }

    static byte[] sessionOpen(final long correlationId)
    {
        return sessionResume(correlationId, -1, 0, 0);
    }

    /** A resume of a session by id, presenting the given secret (an open, with id -1). */
    static byte[] sessionResume(final long correlationId, final long sessionId, final long secretHigh,
        final long secretLow)
    {
        final UnsafeBuffer buffer = buffer();
        final int length = new SessionConnectEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder()).correlationId(correlationId)
            .resumeSessionId(sessionId).lastEgressSequence(-1).sessionSecretHigh(secretHigh)
            .sessionSecretLow(secretLow).putCredentials(new byte[0], 0, 0).encodedLength();
        return bytes(buffer, length);
    }

    /** A member-protocol notice of a newer membership epoch with these voters, claiming to come from a member. */
    static UnsafeBuffer configurationNotice(final int fromMember, final long epoch, final long voters)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[io.lockstep.consensus.codecs.MessageHeaderEncoder
            .ENCODED_LENGTH + ConfigurationNoticeEncoder.BLOCK_LENGTH]);
        new ConfigurationNoticeEncoder().wrapAndApplyHeader(buffer, 0,
            new io.lockstep.consensus.codecs.MessageHeaderEncoder()).memberId(fromMember).configEpoch(epoch)
            .voters(voters).learners(0).configVersion(0);
        return buffer;
    }

    /** The message behind its int32 length prefix, little-endian. */
    static byte[] frame(final byte[] message)
    {
        final ByteBuffer out = ByteBuffer.allocate(4 + message.length).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(message.length).put(message);
        return out.array();
    }

    private static UnsafeBuffer buffer()
    {
        return new UnsafeBuffer(new byte[256]);
    }

    private static byte[] bytes(final UnsafeBuffer buffer, final int bodyLength)
    {
        final byte[] out = new byte[MessageHeaderEncoder.ENCODED_LENGTH + bodyLength];
        buffer.getBytes(0, out);
        return out;
    }
}
