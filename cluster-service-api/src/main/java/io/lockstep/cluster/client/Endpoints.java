package io.lockstep.cluster.client;

import io.lockstep.cluster.transport.Member;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The members a client dials, written as a member's configuration writes them: {@code 0=10.0.1.1:9101,
 * 1=10.0.2.1:9101, 2=10.0.3.1:9101}. The ids matter: a follower tells a client which member leads by its id.
 */
final class Endpoints
{
    private Endpoints()
    {
    }

    /**
     * @param endpoints {@code id=host:port}, comma separated (standbys, marked {@code /nonvoting} in a member's
     *                  configuration, are left out: clients never use them).
     * @return the members.
     * @throws IllegalArgumentException naming the entry that is not {@code id=host:port}.
     */
    static List<Member> parse(final String endpoints)
    {
        final List<Member> members = new ArrayList<>();
        final Set<Integer> ids = new HashSet<>();
        for (final String raw : endpoints.split(","))
        {
            final String entry = raw.trim();
            if (entry.isEmpty() || entry.endsWith("/nonvoting"))
            {
                continue;
            }
            final String address = entry;
            final int equals = address.indexOf('=');
            final int colon = address.lastIndexOf(':');
            try
            {
                if (equals <= 0 || colon <= equals + 1 || colon == address.length() - 1)
                {
                    throw new NumberFormatException();
                }
                final int id = Integer.parseInt(address.substring(0, equals).trim());
                final int port = Integer.parseInt(address.substring(colon + 1).trim());
                if (id < 0 || port <= 0 || port > 65535 || !ids.add(id))
                {
                    throw new NumberFormatException();
                }
                members.add(new Member(id, address.substring(equals + 1, colon).trim(), port, true));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("endpoint '" + entry + "' is not id=host:port with a unique id " +
                    "of 0 or more and a port of 1 to 65535 (as in 0=10.0.1.1:9101,1=10.0.2.1:9101)");
            }
        }
        if (members.isEmpty())
        {
            throw new IllegalArgumentException("no endpoints in '" + endpoints + "': give id=host:port, comma " +
                "separated");
        }
        return members;
    }
}
