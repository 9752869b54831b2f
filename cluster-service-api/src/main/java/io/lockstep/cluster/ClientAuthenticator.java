package io.lockstep.cluster;

/**
 * Decides whether a client may open (or resume) a session, from the credentials it sent at connect. The leader asks
 * it; the principal it returns goes into the session-open log entry, so every member, and the service through
 * {@link ClientSession#principal()}, sees who the session belongs to. A resume after a failover is authenticated
 * again by the new leader and must come back as the same principal.
 * <p>
 * It runs on the leader's member thread at each connect and resume: it must not block (no network call per
 * connect: load or cache what it checks against). A member names its authenticator with
 * {@code lockstep.client.authenticator}: {@code accept-all} (the default, which the member says at start-up),
 * {@code token-file} ({@link TokenFileAuthenticator}), or the name of a class with a public no-argument
 * constructor.
 */
@FunctionalInterface
public interface ClientAuthenticator
{
    /**
     * What an authenticator decided.
     *
     * @param principal who the client is (accepted), or null (rejected).
     * @param rejection why not (rejected: sent to the client, so say nothing an attacker should learn), or null.
     */
    record Decision(String principal, String rejection)
    {
        /** Longest principal, in characters: it is stored with every session. */
        public static final int MAX_PRINCIPAL_LENGTH = 256;

        public Decision
        {
            if ((null == principal) == (null == rejection))
            {
                throw new IllegalArgumentException("a decision either accepts a principal or rejects with a reason");
            }
            if (null != principal && principal.length() > MAX_PRINCIPAL_LENGTH)
            {
                throw new IllegalArgumentException("principal longer than " + MAX_PRINCIPAL_LENGTH + " characters");
            }
        }

        public static Decision accept(final String principal)
        {
            return new Decision(principal, null);
        }

        public static Decision reject(final String reason)
        {
            return new Decision(null, reason);
        }

        public boolean accepted()
        {
            return null != principal;
        }
    }

    /** Accepts every client, with the empty principal. */
    ClientAuthenticator ACCEPT_ALL = credentials -> Decision.accept("");

    /**
     * @param credentials what the client passed to {@code ClusterClient.connect} (empty if nothing).
     * @return accept with a principal, or reject with a reason.
     */
    Decision authenticate(byte[] credentials);
}
