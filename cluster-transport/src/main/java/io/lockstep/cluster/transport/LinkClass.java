package io.lockstep.cluster.transport;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The kinds of link a cluster has, each of which can be encrypted or not on its own: inside a zone a cluster may run
 * its member links in clear text on a private network while the standby links that cross zones, and the clients that
 * come from elsewhere, use TLS.
 */
public enum LinkClass
{
    /** Between two voting members. Mutual TLS: both sides present a certificate for their configured host. */
    MEMBERS,
    /** Between a member and a warm standby (a member listed as non-voting), or two standbys: the cross-zone links. */
    STANDBY,
    /** From clients, which check the member's certificate and need none of their own. */
    CLIENTS,
    /** From operator tools, which check the member's certificate and prove the tool secret inside the TLS link. */
    TOOLS;

    /** The name used in configuration files. */
    public String configName()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text a comma-separated list of {@code members}, {@code standby}, {@code clients}, {@code tools}, or
     *             {@code all}, or {@code none} (or empty) for none.
     * @return the classes named.
     * @throws IllegalArgumentException naming the word that is none of these.
     */
    public static Set<LinkClass> parse(final String text)
    {
        final EnumSet<LinkClass> classes = EnumSet.noneOf(LinkClass.class);
        for (final String word : text.split(","))
        {
            final String name = word.trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty() || "none".equals(name))
            {
                continue;
            }
            if ("all".equals(name))
            {
                classes.addAll(EnumSet.allOf(LinkClass.class));
                continue;
            }
            boolean known = false;
            for (final LinkClass c : values())
            {
                if (c.configName().equals(name))
                {
                    classes.add(c);
                    known = true;
                }
            }
            if (!known)
            {
                throw new IllegalArgumentException("'" + word.trim() + "' is not a link class: use members, standby, " +
                    "clients, tools, all or none");
            }
        }
        return classes;
    }

    /**
     * @return the class of the link between two members: standby if either is non-voting.
     */
    public static LinkClass between(final Member a, final Member b)
    {
        return a.voting() && b.voting() ? MEMBERS : STANDBY;
    }
}
