package io.lockstep.cluster.transport;

import io.lockstep.cluster.codecs.HeartbeatDecoder;
import io.lockstep.cluster.codecs.MessageHeaderDecoder;

import java.io.IOException;
import java.nio.ByteOrder;
import javax.net.ssl.SSLException;

/**
 * The read side of every connection: bytes from the socket (or decrypted from a TLS link) into the connection's read
 * buffer, cut into length-prefixed messages, each checked by the {@link FrameValidator} before any decoder reads it,
 * then handed to the handshake or, once the connection is ready, to the transport's handler. A connection that sends
 * garbage is dropped through {@link Owner#disconnect} with the reason; the member carries on.
 */
final class ConnectionReader
{
    /** What the reader needs of the transport that owns the connections. */
    interface Owner
    {
        /** Drop a connection; reason null: nothing worth logging (the peer went away). */
        void disconnect(TcpConnection c, String reason);

        /** A dialled connection finished its handshake in the TLS layer (no member secret). */
        void endHandshake(TcpConnection c);

        /**
         * A message on a connection still in its handshake.
         *
         * @return false if the connection was closed.
         */
        boolean onHandshake(TcpConnection c, MessageHeaderDecoder header, int messageOffset);

        /** Whole messages came from this connection in this read. */
        void heard(TcpConnection c);

        /** @return bytes of buffers clients hold now, for the refusal of a frame too large for what is left. */
        long clientBytesInUse();
    }

    private static final int LENGTH_PREFIX = Integer.BYTES;

    private final Owner owner;
    /** The one check every message passes before a decoder reads it. */
    private final FrameValidator validator;
    private final int maxMessageLength;
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private TlsPolicy tls;
    private Transport.MessageHandler handler;

    ConnectionReader(final Owner owner, final FrameValidator validator, final int maxMessageLength, final TlsPolicy tls)
    {
        this.owner = owner;
        this.validator = validator;
        this.maxMessageLength = maxMessageLength;
        this.tls = tls;
    }

    /** The TLS rules, when the transport's change (before the first poll). */
    void tls(final TlsPolicy tls)
    {
        this.tls = tls;
    }

    /** Where ready connections' messages go, for this poll. */
    void handler(final Transport.MessageHandler handler)
    {
        this.handler = handler;
    }

    /**
     * Read what a connection has, and deliver every whole message in it.
     */
    void read(final TcpConnection c)
    {
        if (c.connectTo < 0 && null != c.tls && !c.tls.handshakeDone() && !mayWorkOnHandshake(c))
        {
            return;
        }
        boolean fromSocket = true;
        do
        {
            final int read;
            try
            {
                read = fill(c, fromSocket);
            }
            catch (final IOException ex)
            {
                owner.disconnect(c, ex instanceof SSLException ? TlsPolicy.failure(c, ex) : null);
                return;
            }
            if (read < 0)
            {
                owner.disconnect(c, closedReason(c));
                return;
            }
            if (null != c.tls && c.connectTo >= 0 && c.handshakeDeadlineNs > 0 &&
                TcpConnection.Stage.READY == c.stage && c.tls.handshakeDone())
            {
                // Dialled without a secret: the TLS handshake was all the handshake there is.
                owner.endHandshake(c);
            }
            if (!c.open || c.tlsDeferred || (0 == read && !fromSocket))
            {
                // Closed; or waiting for its share of handshake work; or nothing more to decrypt for now.
                return;
            }
            fromSocket = false;
        }
        // A TLS link may hold decrypted bytes the read buffer had no room for: read on once frames made room, up to
        // the poll's share of records without data.
        while (readFrames(c) && null != c.tls && c.tls.hasBuffered() && c.readBuffer.hasRemaining() &&
            !c.tls.starved());
    }

    /**
     * An accepted connection in its TLS handshake: take what the socket has, and spend one of this poll's handshake
     * reads on it only once a whole record is there. A peer that sends a record a byte at a time costs no share,
     * and, holding no whole record, stays among the first to be evicted ({@link ConnectionTable#isSilent}).
     *
     * @return true if the engine may work on the connection now.
     */
    private boolean mayWorkOnHandshake(final TcpConnection c)
    {
        try
        {
            if (c.tls.readSocket(c.channel) < 0)
            {
                owner.disconnect(c, closedReason(c));
                return false;
            }
        }
        catch (final IOException ex)
        {
            owner.disconnect(c, null);
            return false;
        }
        return c.tls.holdsWholeRecord() && tls.takeHandshakeRead(c);
    }

    /**
     * Why the peer closed, where it says something: in the middle of a message, in the TLS handshake, for a member
     * this side dialled before it answered anything (it refused this side: its own log says why), or, for a peer that
     * claimed a member id here, before it proved the secret (it holds another).
     */
    private static String closedReason(final TcpConnection c)
    {
        if (c.readBuffer.position() > 0)
        {
            return "connection closed in the middle of a message";
        }
        if (null != c.tls && !c.tls.handshakeDone())
        {
            return TlsPolicy.failure(c, null);
        }
        if (c.connectTo >= 0 && !c.heardFrom)
        {
            return "member " + c.connectTo + " closed the connection before answering: it refused this side (its " +
                "log and tool errors say why: TLS required (lockstep.tls.links), a wrong secret, a bound) or is " +
                "stopping";
        }
        if (TcpConnection.Stage.AWAIT_PROOF == c.stage && c.claimedId >= 0)
        {
            // The accepting side proves first: a peer with another secret finds this one's proof wrong and hangs up
            // without sending its own. Unsaid, a process with the wrong member secret would leave no trace here. (A
            // tool with the wrong secret is told on its own screen, and a tool that finished with the leader closes
            // its other connections wherever their handshakes are.)
            return "a peer claiming to be member " + c.claimedId + " from " + TcpTransport.remoteOf(c) +
                " closed the connection before proving the member secret: it holds another secret (it refused this " +
                "member's proof), or gave up";
        }
        return null;
    }

    /**
     * Plain bytes into the read buffer: from the socket, or, on a TLS link, decrypted from the records it sent.
     *
     * @param fromSocket false: only what a TLS link already holds.
     * @return the bytes added, or -1 at the end of the stream.
     */
    private int fill(final TcpConnection c, final boolean fromSocket) throws IOException
    {
        if (null != c.tls)
        {
            return fromSocket ? c.tls.read(c.channel, c.readBuffer) : c.tls.decrypt(c.channel, c.readBuffer);
        }
        if (!fromSocket)
        {
            return 0;
        }
        final int read = c.channel.read(c.readBuffer);
        return read > 0 && !c.tlsDecided ? detectTls(c, read) : read;
    }

    /** An accepted connection's first bytes: TLS or the clear (see {@link TlsPolicy#classify}). */
    private int detectTls(final TcpConnection c, final int read) throws IOException
    {
        final TlsPolicy.FirstBytes first = TlsPolicy.classify(c.readView, c.readBuffer.position());
        if (TlsPolicy.FirstBytes.UNDECIDED == first)
        {
            return read;
        }
        c.tlsDecided = true;
        if (TlsPolicy.FirstBytes.CLEAR == first)
        {
            return read;
        }
        c.tls = tls.accept();
        if (null == c.tls)
        {
            owner.disconnect(c, TlsPolicy.noFilesReason());
            return 0;
        }
        c.readBuffer.flip();
        c.tls.takeFirstBytes(c.readBuffer);
        c.readBuffer.clear();
        return c.tls.holdsWholeRecord() && tls.takeHandshakeRead(c) ? c.tls.decrypt(c.channel, c.readBuffer) : 0;
    }

    /**
     * Deliver every whole frame in the read buffer, and keep the rest.
     *
     * @return false if the connection was closed.
     */
    private boolean readFrames(final TcpConnection c)
    {
        int offset = 0;
        final int limit = c.readBuffer.position();
        while (limit - offset >= LENGTH_PREFIX)
        {
            final int length = c.readView.getInt(offset, ByteOrder.LITTLE_ENDIAN);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH || length > maxMessageLength)
            {
                owner.disconnect(c, "bad message length " + length);
                return false;
            }
            final boolean handshaking = TcpConnection.Stage.READY != c.stage;
            if (handshaking && length > TcpConnection.MAX_HANDSHAKE_MESSAGE_LENGTH)
            {
                // Only a handshake message may come next, and they are small: a longer frame is garbage, and
                // waiting for it would hold a connection on a buffer it can never fill.
                owner.disconnect(c, "a message of " + length + " bytes during the handshake, where only handshake " +
                    "messages (at most " + TcpConnection.MAX_HANDSHAKE_MESSAGE_LENGTH + " bytes) may come");
                return false;
            }
            if (limit - offset - LENGTH_PREFIX < length)
            {
                break;
            }
            final int messageOffset = offset + LENGTH_PREFIX;
            offset = messageOffset + length;
            if (!validator.isValid(c.readView, messageOffset, length))
            {
                owner.disconnect(c, validator.reason());
                return false;
            }
            headerDecoder.wrap(c.readView, messageOffset);
            if (!deliver(c, messageOffset, length, handshaking))
            {
                return false;
            }
        }
        if (offset > 0)
        {
            owner.heard(c);
        }
        c.readBuffer.limit(limit).position(offset);
        c.readBuffer.compact();
        if (TcpConnection.Stage.READY == c.stage && !c.readBuffer.hasRemaining() && !c.growReadBufferForMore())
        {
            // Full, with a frame still coming: it did not fit the budget for clients' buffers, or the JVM's memory.
            owner.disconnect(c, "a frame of " + c.readView.getInt(0, ByteOrder.LITTLE_ENDIAN) + " bytes does not fit " +
                "the buffers left for clients (" + owner.clientBytesInUse() + " bytes in use; " +
                "lockstep.client.buffers.max.bytes)");
            return false;
        }
        return true;
    }

    /**
     * One message that passed the {@link FrameValidator}, to the handshake or to the handler. A decoder that still
     * throws (an enum value the schema does not have, say) closes this connection only: the message was at fault,
     * not the member. Anything else thrown is the member's own failure and goes on up.
     *
     * @return false if the connection was closed and nothing more of it may be read.
     */
    private boolean deliver(final TcpConnection c, final int messageOffset, final int length, final boolean handshaking)
    {
        try
        {
            if (handshaking)
            {
                return owner.onHandshake(c, headerDecoder, messageOffset);
            }
            if (HelloHandshake.isHandshake(headerDecoder))
            {
                owner.disconnect(c, "a handshake message (template " + headerDecoder.templateId() + ") after the " +
                    "handshake");
                return false;
            }
            if (HeartbeatDecoder.TEMPLATE_ID == headerDecoder.templateId() &&
                HeartbeatDecoder.SCHEMA_ID == headerDecoder.schemaId())
            {
                // Only a sign of life: the read pass already counted it.
                return true;
            }
            handler.onMessage(c.endpoint, c.readView, messageOffset, length);
            return c.channel.isOpen();
        }
        catch (final RuntimeException ex)
        {
            if (!DecoderFaults.isDecoderFault(ex, validator.shapes()))
            {
                throw ex;
            }
            owner.disconnect(c, "could not decode template " + c.readView.getShort(messageOffset + 2,
                ByteOrder.LITTLE_ENDIAN) + " of schema " + c.readView.getShort(messageOffset + 4,
                ByteOrder.LITTLE_ENDIAN) + ": " + ex);
            return false;
        }
    }
}
