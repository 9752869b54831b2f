package io.lockstep.consensus;

import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import org.agrona.DirectBuffer;

/**
 * One inbound member-protocol message's bounds, set once per message and read by the handler of its kind: the
 * buffer, where the message starts and ends, where its body starts, and the header's block length and version for
 * the body's flyweight. One instance is reused for every message; a handler never keeps it.
 */
final class InboundMessage
{
    DirectBuffer buffer;
    int offset;
    int length;
    int body;
    int blockLength;
    int version;

    InboundMessage set(final DirectBuffer buffer, final int offset, final int length, final MessageHeaderDecoder header)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        this.blockLength = header.blockLength();
        this.version = header.version();
        return this;
    }

    /** @return the index just past the message. */
    int end()
    {
        return offset + length;
    }
}
