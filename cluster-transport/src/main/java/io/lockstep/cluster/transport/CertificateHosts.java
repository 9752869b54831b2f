package io.lockstep.cluster.transport;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Whether a certificate names a host, by its subject alternative names (the common name is not looked at, as browsers
 * and the JDK's own check no longer do). A member that accepts a connection from another uses this to hold the peer's
 * certificate to the host that member is configured at: a certificate of one member's host cannot prove another id.
 */
final class CertificateHosts
{
    private static final int DNS_NAME = 2;
    private static final int IP_ADDRESS = 7;

    private CertificateHosts()
    {
    }

    /**
     * @param host a name or an IP address literal, as in {@code lockstep.members}.
     * @return true if one of the certificate's subject alternative names is the host: an IP address entry equal to
     * the literal, or a DNS entry equal to the name (case-insensitive; a leading {@code *.} stands for one label).
     */
    static boolean covers(final X509Certificate certificate, final String host)
    {
        final Collection<List<?>> names;
        try
        {
            names = certificate.getSubjectAlternativeNames();
        }
        catch (final CertificateParsingException ex)
        {
            return false;
        }
        if (null == names)
        {
            return false;
        }
        final InetAddress address = literal(host);
        for (final List<?> name : names)
        {
            final int type = (Integer)name.get(0);
            final String value = String.valueOf(name.get(1));
            if (null != address ? IP_ADDRESS == type && address.equals(literal(value)) :
                DNS_NAME == type && dnsMatches(value, host))
            {
                return true;
            }
        }
        return false;
    }

    /** The address if the text is an IP literal; never a lookup, which could block or be spoofed. */
    private static InetAddress literal(final String text)
    {
        if (text.isEmpty())
        {
            return null;
        }
        final boolean v4 = text.chars().allMatch(ch -> Character.isDigit(ch) || '.' == ch);
        final boolean v6 = text.indexOf(':') >= 0;
        if (!v4 && !v6)
        {
            return null;
        }
        try
        {
            return InetAddress.getByName(text.startsWith("[") ? text.substring(1, text.length() - 1) : text);
        }
        catch (final UnknownHostException ex)
        {
            return null;
        }
    }

    private static boolean dnsMatches(final String pattern, final String host)
    {
        final String p = pattern.toLowerCase(Locale.ROOT);
        final String h = host.toLowerCase(Locale.ROOT);
        if (p.startsWith("*."))
        {
            final int dot = h.indexOf('.');
            return dot > 0 && h.substring(dot).equals(p.substring(1));
        }
        return p.equals(h);
    }
}
