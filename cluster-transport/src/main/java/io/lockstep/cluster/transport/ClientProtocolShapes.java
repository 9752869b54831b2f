package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.EgressDecoder;
import io.lockstep.cluster.codecs.HeartbeatDecoder;
import io.lockstep.cluster.codecs.HelloDecoder;
import io.lockstep.cluster.codecs.HelloProofDecoder;
import io.lockstep.cluster.codecs.HelloReplyDecoder;
import io.lockstep.cluster.codecs.IngressAckDecoder;
import io.lockstep.cluster.codecs.IngressDecoder;
import io.lockstep.cluster.codecs.KeepAliveDecoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.SessionCloseRequestDecoder;
import io.lockstep.cluster.codecs.SessionConnectDecoder;
import io.lockstep.cluster.codecs.SessionEventDecoder;

/**
 * The shape of every message of the client protocol ({@code client-protocol.xml}), which every transport reads:
 * the handshake, sessions, ingress and egress. Held to the schema by a test.
 */
public final class ClientProtocolShapes
{
    /** The schema's maxValue for {@code varDataEncoding}: payloads and credentials. */
    static final int MAX_DATA_LENGTH = 16 * 1024 * 1024;
    /** The schema's maxValue for {@code varAsciiEncoding}: the detail of a session event. */
    static final int MAX_ASCII_LENGTH = 4096;

    private ClientProtocolShapes()
    {
    }

    /**
     * @return a new registry holding the client protocol, to which a side adds the other schemas it reads.
     */
    public static MessageShapes create()
    {
        final int schema = MessageHeaderDecoder.SCHEMA_ID;
        return new MessageShapes()
            .schema(schema, MessageHeaderDecoder.SCHEMA_VERSION, MessageHeaderDecoder.class.getPackageName())
            // Version 2 added the handshake's authentication flag and nonce.
            .message(schema, HelloDecoder.TEMPLATE_ID, MessageShape.block(8).grownTo(2, HelloDecoder.BLOCK_LENGTH))
            .message(schema, HelloReplyDecoder.TEMPLATE_ID, MessageShape.block(HelloReplyDecoder.BLOCK_LENGTH))
            .message(schema, HelloProofDecoder.TEMPLATE_ID, MessageShape.block(HelloProofDecoder.BLOCK_LENGTH))
            .message(schema, HeartbeatDecoder.TEMPLATE_ID, MessageShape.block(HeartbeatDecoder.BLOCK_LENGTH))
            // Version 2 added the credentials, version 4 the session secret a resume presents.
            .message(schema, SessionConnectDecoder.TEMPLATE_ID, MessageShape.block(24)
                .grownTo(4, SessionConnectDecoder.BLOCK_LENGTH).varData(2, MAX_DATA_LENGTH))
            // Version 3 added the answering member's term, version 4 the session secret an open returns.
            .message(schema, SessionEventDecoder.TEMPLATE_ID, MessageShape.block(29).grownTo(3, 37)
                .grownTo(4, SessionEventDecoder.BLOCK_LENGTH).varData(MAX_ASCII_LENGTH))
            .message(schema, IngressDecoder.TEMPLATE_ID, MessageShape.block(IngressDecoder.BLOCK_LENGTH)
                .varData(MAX_DATA_LENGTH))
            .message(schema, IngressAckDecoder.TEMPLATE_ID, MessageShape.block(16)
                .grownTo(3, IngressAckDecoder.BLOCK_LENGTH))
            .message(schema, EgressDecoder.TEMPLATE_ID, MessageShape.block(EgressDecoder.BLOCK_LENGTH)
                .varData(MAX_DATA_LENGTH))
            .message(schema, KeepAliveDecoder.TEMPLATE_ID, MessageShape.block(KeepAliveDecoder.BLOCK_LENGTH))
            .message(schema, SessionCloseRequestDecoder.TEMPLATE_ID,
                MessageShape.block(SessionCloseRequestDecoder.BLOCK_LENGTH));
    }
}
