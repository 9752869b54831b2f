package io.lockstep.cluster;

/**
 * Why a client session closed.
 */
public enum CloseReason
{
    /** The client closed it. */
    CLIENT_ACTION,
    /** The service closed it. */
    SERVICE_ACTION,
    /** No message or keepalive from the client for the session timeout, in log time. */
    TIMEOUT,
    /** The client sent a malformed or oversized message. */
    ERROR
}
