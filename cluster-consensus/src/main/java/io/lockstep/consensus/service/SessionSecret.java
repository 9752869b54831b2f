package io.lockstep.consensus.service;

import java.util.random.RandomGenerator;

/**
 * A session's secret: 128 random bits the leader chooses when it appends the session's open, carried in that log
 * entry (so every member holds the same) and in snapshots, and returned to the client that opened the session. A
 * resume must present it: the session id alone, which counts up from 1, grants nothing.
 *
 * @param high    the first 64 bits.
 * @param low     the last 64 bits.
 * @param present false only for {@link #NONE}.
 */
public record SessionSecret(long high, long low, boolean present)
{
    /** The secret of a session opened by a version that had none: no resume matches it. */
    public static final SessionSecret NONE = new SessionSecret(0, 0, false);

    /**
     * @param random a cryptographically strong generator on a member ({@code SecureRandom}); a seeded one in the
     *               simulation, so that a seed replays exactly.
     * @return a fresh secret.
     */
    public static SessionSecret next(final RandomGenerator random)
    {
        return new SessionSecret(random.nextLong(), random.nextLong(), true);
    }

    /**
     * Compared in constant time: how long the check takes says nothing about how many bits were right.
     *
     * @return true if this is a secret and the presented bits are it.
     */
    public boolean matches(final long presentedHigh, final long presentedLow)
    {
        return present & ((high ^ presentedHigh) | (low ^ presentedLow)) == 0;
    }

    /** Never the bits: a secret printed in a log would be a secret given away. */
    public String toString()
    {
        return present ? "SessionSecret[present]" : "SessionSecret[none]";
    }
}
