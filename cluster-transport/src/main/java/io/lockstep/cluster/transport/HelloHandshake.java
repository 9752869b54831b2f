package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloDecoder;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofDecoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.HelloReplyDecoder;
import io.lockstep.cluster.codecs.HelloReplyEncoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.security.SecureRandom;

/**
 * Who is on the other end of a connection: the {@code Hello} exchange every connection starts with (templates 10-12
 * of the client protocol). The connecting side says who it is ({@code Hello}, with a nonce); with a member secret the
 * accepting side proves the secret first ({@code HelloReply}, its nonce and proof) and the connector then proves it
 * ({@code HelloProof}), so neither gives a proof to someone who has not shown theirs. A member proves the member
 * secret; a tool the tool secret, which cannot make it a member; a plain client proves nothing and is never
 * trusted.
 * <p>
 * Each step answers with an {@link Outcome}; the transport does the rest (drops the connection with
 * {@link #refusal()}, or registers it as {@link #peerId()}). The checks run in the order an attacker meets them, and
 * a peer speaking garbage makes no decoder throw: raw values are read where a field is an enum.
 */
final class HelloHandshake
{
    /** What a handshake message leads to. */
    enum Outcome
    {
        /** The handshake goes on: wait for the peer's next message. */
        WAIT,
        /** Drop the connection, for {@link #refusal()}. */
        REFUSED,
        /** Accepting side, done: the connection is {@link #peerId()}'s (a client's if negative), {@link #trusted()}. */
        REGISTER,
        /** Connecting side, done: the member dialled proved itself, and this side's proof is queued. */
        CONNECTED
    }

    private final int selfId;
    private final Member[] members;
    private final int segmentLength;
    /** Null: no member authentication (every connection is trusted, as the start-up warning says). */
    private final ClusterSecret secret;
    /** What tools prove to this member; null: no tool is trusted (unless the cluster runs without secrets). */
    private ClusterSecret toolSecret;
    private final SecureRandom random = new SecureRandom();
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final HelloDecoder helloDecoder = new HelloDecoder();
    private final HelloReplyDecoder replyDecoder = new HelloReplyDecoder();
    private final HelloProofDecoder proofDecoder = new HelloProofDecoder();

    private String refusal;
    private int peerId;
    private boolean trusted;

    HelloHandshake(final int selfId, final Member[] members, final int segmentLength, final ClusterSecret secret)
    {
        this.selfId = selfId;
        this.members = members;
        this.segmentLength = segmentLength;
        this.secret = secret;
    }

    void toolSecret(final ClusterSecret toolSecret)
    {
        this.toolSecret = toolSecret;
    }

    /** @return true if a message of this header is one of the handshake's (in any stage). */
    static boolean isHandshake(final MessageHeaderDecoder header)
    {
        final int templateId = header.templateId();
        return header.schemaId() == HelloDecoder.SCHEMA_ID && (templateId == HelloDecoder.TEMPLATE_ID ||
            templateId == HelloReplyDecoder.TEMPLATE_ID || templateId == HelloProofDecoder.TEMPLATE_ID);
    }

    /**
     * Connecting side: queue {@code Hello} on a connection just opened.
     *
     * @return true if the connection is ready at once (no member secret, so nothing to prove).
     */
    boolean sayHello(final TcpConnection c)
    {
        c.localNonce = nonce();
        final HelloEncoder hello = new HelloEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder)
            .memberId(selfId)
            .segmentLength(segmentLength)
            .authenticate(null != secret ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(c.localNonce, 0, ClusterSecret.NONCE_LENGTH);
        c.enqueue(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + hello.encodedLength());
        return null == secret;
    }

    /**
     * A message on a connection still in its handshake.
     *
     * @param body        index of the message body in the connection's read view.
     * @param tls         the transport's TLS rules, for who must have come over TLS.
     * @param limits      the transport's bounds, for the client count.
     * @param openClients client connections open now, tools not counted.
     */
    Outcome onMessage(
        final TcpConnection c,
        final MessageHeaderDecoder header,
        final int body,
        final TlsPolicy tls,
        final ConnectionLimits limits,
        final int openClients)
    {
        final int templateId = isHandshake(header) ? header.templateId() : -1;
        switch (c.stage)
        {
            case AWAIT_HELLO:
                if (HelloDecoder.TEMPLATE_ID == templateId)
                {
                    helloDecoder.wrap(c.readView, body, header.blockLength(), header.version());
                    return onHello(c, tls, limits, openClients);
                }
                break;
            case AWAIT_PROOF:
                if (HelloProofDecoder.TEMPLATE_ID == templateId)
                {
                    proofDecoder.wrap(c.readView, body, header.blockLength(), header.version());
                    return onProof(c);
                }
                break;
            case AWAIT_REPLY:
                if (HelloReplyDecoder.TEMPLATE_ID == templateId)
                {
                    replyDecoder.wrap(c.readView, body, header.blockLength(), header.version());
                    return onReply(c);
                }
                break;
            default:
                break;
        }
        return refuse("expected " + expected(c.stage) + " but got template " + header.templateId() + " of schema " +
            header.schemaId());
    }

    /** @return why the last {@link Outcome#REFUSED} refused. */
    String refusal()
    {
        return refusal;
    }

    /** @return after {@link Outcome#REGISTER}: the member id the peer proved, or -1 for a client or tool. */
    int peerId()
    {
        return peerId;
    }

    /** @return after {@link Outcome#REGISTER}: whether the connection may send tool requests. */
    boolean trusted()
    {
        return trusted;
    }

    private static String expected(final TcpConnection.Stage stage)
    {
        return switch (stage)
        {
            case AWAIT_HELLO -> "Hello first";
            case AWAIT_PROOF -> "HelloProof";
            case AWAIT_REPLY -> "HelloReply";
            default -> "nothing";
        };
    }

    /** Accepting side: who is speaking, and whether they will prove the secret. */
    private Outcome onHello(
        final TcpConnection c, final TlsPolicy tls, final ConnectionLimits limits, final int openClients)
    {
        final int claimed = helloDecoder.memberId();
        // Raw values: a peer speaking garbage must not make the decoder throw.
        final boolean authenticating = BooleanFlag.TRUE.value() == helloDecoder.authenticateRaw();
        c.claimedIdentity = claimed >= 0 || authenticating;
        final String refused = claimed >= 0 ? memberRefusal(c, claimed, authenticating, tls) :
            clientRefusal(c, authenticating, tls, limits, openClients);
        if (null != refused)
        {
            return refuse(refused);
        }
        if (!authenticating)
        {
            return register(claimed, null == secret);
        }
        // A member proves the member secret; a tool the tool secret, which cannot make it a member.
        final ClusterSecret expected = claimed >= 0 ? secret : toolSecret;
        if (null != secret && null == expected)
        {
            return refuse("refused to trust a tool: this member has no tool secret configured " +
                "(lockstep.tool.secret.file), so no tool can be trusted");
        }
        c.handshakeSecret = expected;
        c.claimedId = claimed;
        c.peerNonce = new byte[ClusterSecret.NONCE_LENGTH];
        helloDecoder.getNonce(c.peerNonce, 0, ClusterSecret.NONCE_LENGTH);
        c.localNonce = nonce();
        final HelloReplyEncoder reply = new HelloReplyEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder)
            .memberId(selfId)
            .authenticate(null != secret ? BooleanFlag.TRUE : BooleanFlag.FALSE)
            .putNonce(c.localNonce, 0, ClusterSecret.NONCE_LENGTH)
            .putProof(null == expected ? new byte[ClusterSecret.PROOF_LENGTH] :
                expected.proof(ClusterSecret.Role.ACCEPTOR, c.peerNonce, c.localNonce, claimed, selfId), 0,
                ClusterSecret.PROOF_LENGTH);
        c.enqueue(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + reply.encodedLength());
        if (null == secret)
        {
            // The peer will hang up on learning this member has no secret; if it does not, it is an open cluster.
            return register(claimed, true);
        }
        c.stage = TcpConnection.Stage.AWAIT_PROOF;
        return Outcome.WAIT;
    }

    /** @return why a Hello claiming a member id is refused, or null. */
    private String memberRefusal(
        final TcpConnection c, final int claimed, final boolean authenticating, final TlsPolicy tls)
    {
        if (null == member(claimed) || claimed == selfId)
        {
            return "Hello from member id " + claimed + ", which is not a configured peer";
        }
        if (claimed > selfId && selfId >= 0)
        {
            // Only lower ids dial in: a claim of a higher id could otherwise replace this member's own connection to
            // that member, which never dials here to take its place back.
            return "Hello from member id " + claimed + ", above this member's own: members dial only higher ids";
        }
        final String tlsRefusal = tls.memberRefusal(c, member(selfId), member(claimed));
        if (null != tlsRefusal)
        {
            return tlsRefusal;
        }
        if (helloDecoder.segmentLength() != segmentLength)
        {
            return "member " + claimed + " uses log segment length " + helloDecoder.segmentLength() +
                ", this member " + segmentLength + ": positions would disagree";
        }
        if (null != secret && !authenticating)
        {
            return "refused a connection claiming to be member " + claimed + ": it did not offer to prove the " +
                "member secret, which this member requires (lockstep.cluster.secret.file)";
        }
        return null;
    }

    /** @return why a client's or tool's Hello is refused, or null. */
    private static String clientRefusal(
        final TcpConnection c,
        final boolean authenticating,
        final TlsPolicy tls,
        final ConnectionLimits limits,
        final int openClients)
    {
        final String tlsRefusal = tls.clientRefusal(c, authenticating);
        if (null != tlsRefusal)
        {
            return tlsRefusal;
        }
        if (!authenticating && openClients >= limits.maxClients())
        {
            // Tools have slots of their own, taken once they proved the tool secret: clients cannot crowd them out.
            return "refused a client connection: " + limits.maxClients() + " are open " +
                "(lockstep.client.connections.max)";
        }
        return null;
    }

    /** Accepting side: the connector's proof, after it checked this member's. */
    private Outcome onProof(final TcpConnection c)
    {
        final byte[] proof = new byte[ClusterSecret.PROOF_LENGTH];
        proofDecoder.getProof(proof, 0, ClusterSecret.PROOF_LENGTH);
        if (!c.handshakeSecret.verify(proof, ClusterSecret.Role.CONNECTOR, c.peerNonce, c.localNonce, c.claimedId,
            selfId))
        {
            return refuse(c.claimedId >= 0 ? "refused a connection claiming to be member " + c.claimedId + ": wrong " +
                "proof of the member secret (another cluster's, a tool's, or not a member)" : "refused to trust a " +
                "tool: wrong proof of the tool secret (lockstep.tool.secret.file)");
        }
        return register(c.claimedId, true);
    }

    /** Connecting side: the member proves itself first; then this side does. */
    private Outcome onReply(final TcpConnection c)
    {
        if (replyDecoder.memberId() != c.connectTo)
        {
            return refuse("dialled member " + c.connectTo + " but member " + replyDecoder.memberId() + " answered");
        }
        if (BooleanFlag.TRUE.value() != replyDecoder.authenticateRaw())
        {
            return refuse("member " + c.connectTo + " has no secret configured but this side has one: give every " +
                "member the same lockstep.cluster.secret.file, and every member and tool host the same " +
                "lockstep.tool.secret.file");
        }
        final byte[] peerNonce = new byte[ClusterSecret.NONCE_LENGTH];
        replyDecoder.getNonce(peerNonce, 0, ClusterSecret.NONCE_LENGTH);
        final byte[] proof = new byte[ClusterSecret.PROOF_LENGTH];
        replyDecoder.getProof(proof, 0, ClusterSecret.PROOF_LENGTH);
        if (!secret.verify(proof, ClusterSecret.Role.ACCEPTOR, c.localNonce, peerNonce, selfId, c.connectTo))
        {
            return refuse("member " + c.connectTo + " failed to prove the " + (selfId >= 0 ? "member" : "tool") +
                " secret (a different secret, or not a member of this cluster)");
        }
        final HelloProofEncoder answer = new HelloProofEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder)
            .putProof(secret.proof(ClusterSecret.Role.CONNECTOR, c.localNonce, peerNonce, selfId, c.connectTo), 0,
                ClusterSecret.PROOF_LENGTH);
        c.enqueue(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + answer.encodedLength());
        return Outcome.CONNECTED;
    }

    private Outcome refuse(final String reason)
    {
        refusal = reason;
        return Outcome.REFUSED;
    }

    private Outcome register(final int peerId, final boolean trusted)
    {
        this.peerId = peerId;
        this.trusted = trusted;
        return Outcome.REGISTER;
    }

    private byte[] nonce()
    {
        final byte[] nonce = new byte[ClusterSecret.NONCE_LENGTH];
        random.nextBytes(nonce);
        return nonce;
    }

    private Member member(final int id)
    {
        for (final Member m : members)
        {
            if (m.id() == id)
            {
                return m;
            }
        }
        return null;
    }
}
