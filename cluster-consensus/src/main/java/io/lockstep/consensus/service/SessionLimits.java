package io.lockstep.consensus.service;

/**
 * What one client may open on the leader, checked before an open is appended, so that one connection cannot fill
 * the session table (or the log with opens) for everyone else. Under accept-all, where every client is the same
 * principal, many connections still can: only an authenticator with a bound per principal stops that. A refused
 * open is answered at once with {@code REFUSED} and the bound's name; existing sessions are never touched.
 *
 * @param perConnection           sessions open (or being opened) on one connection.
 * @param perPrincipal            sessions open for one authenticated principal (under accept-all every client is the
 *                                same, empty, principal: this then bounds them all together).
 * @param opensPerSecondPerConnection opens and resumes one connection may ask for in a second (a resume may resend
 *                                    a session's whole egress buffer).
 */
public record SessionLimits(int perConnection, int perPrincipal, int opensPerSecondPerConnection)
{
    /**
     * 4 per connection (256 client connections then hold at most a quarter of the 4,096-session table), 4,096 per
     * principal (the table's size: no bound of its own), 20 opens a second.
     */
    public static final SessionLimits DEFAULTS = new SessionLimits(4, 4096, 20);

    /**
     * @throws IllegalArgumentException naming the bound out of range.
     */
    public SessionLimits
    {
        if (perConnection < 1 || perPrincipal < 1 || opensPerSecondPerConnection < 1)
        {
            throw new IllegalArgumentException("session bounds must be at least 1: per connection " + perConnection +
                ", per principal " + perPrincipal + ", opens per second " + opensPerSecondPerConnection);
        }
    }
}
