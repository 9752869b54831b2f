package io.lockstep.cluster.transport;

/**
 * The records without data (TLS key updates, mostly) a transport decrypts in one poll, across all its connections.
 * Each costs a key derivation and an answer, about 25 us: credit bounds how many a peer may send in all, and this
 * bounds how many land in one poll, so that a burst saved up by many connections at once is spread over polls
 * instead of holding the member's thread for milliseconds on end (a leader that misses its heartbeats is deposed).
 * Past the share, a connection stops at its next record without data and keeps the rest for the next poll: at most
 * one more each, and links whose records carry data are not held up.
 */
final class QuietRecordShare
{
    /** About 1.6 ms of key derivations a poll at most. */
    static final int PER_POLL = 64;

    private int left = PER_POLL;

    /** A new poll: a new share. */
    void startPoll()
    {
        left = PER_POLL;
    }

    /** @return true if this poll's share is spent: decrypt nothing more until the next. */
    boolean spent()
    {
        return left <= 0;
    }

    /** @return records without data decrypted so far in this poll. */
    int used()
    {
        return PER_POLL - left;
    }

    /** One record without data decrypted. */
    void take()
    {
        left--;
    }
}
