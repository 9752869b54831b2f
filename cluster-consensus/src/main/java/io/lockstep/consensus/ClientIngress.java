package io.lockstep.consensus;

import org.agrona.DirectBuffer;

/**
 * Receives client-protocol messages (schema 103) that arrive at a member: the session layer.
 */
@FunctionalInterface
public interface ClientIngress
{
    /**
     * @param endpoint the client's endpoint id.
     * @param buffer   holding the SBE message, header first; valid only during the call.
     * @param offset   index of the message.
     * @param length   length of the message.
     */
    void onClientMessage(int endpoint, DirectBuffer buffer, int offset, int length);
}
