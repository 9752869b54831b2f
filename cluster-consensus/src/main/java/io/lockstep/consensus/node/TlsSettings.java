package io.lockstep.consensus.node;

import io.lockstep.cluster.transport.LinkClass;
import io.lockstep.cluster.transport.TlsFiles;

import java.io.IOException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which links are encrypted, and the PEM files TLS proves and checks with (see docs/security.md).
 * <pre>
 * lockstep.tls.links             the link classes that must use TLS: a comma list of members, standby, clients,
 *                                tools; or all; default none. A member dials those links with TLS and refuses them in
 *                                the clear; a tool host's config names tools to dial members with TLS.
 * lockstep.tls.certificate.file  this member's certificate chain, PEM, leaf first; its subject alternative names
 *                                include the host this member is listed at in lockstep.members
 * lockstep.tls.key.file          the certificate's private key, unencrypted PKCS#8 PEM, mode 600 (see
 *                                lockstep.secret.permissions.check)
 * lockstep.tls.trust.file        the authorities' certificates, PEM, that sign the members' certificates
 * </pre>
 * A member with a certificate and key accepts TLS from any peer even for a class not listed, so that TLS can be
 * turned on one member at a time. The files are read again when they change (every 10 s), for new connections.
 * Relative paths are relative to the config file's directory.
 *
 * @param files the files, or null without them.
 * @param links the classes that must use TLS.
 */
public record TlsSettings(TlsFiles files, Set<LinkClass> links)
{
    public static final String LINKS = "lockstep.tls.links";
    public static final String CERTIFICATE_FILE = "lockstep.tls.certificate.file";
    public static final String KEY_FILE = "lockstep.tls.key.file";
    public static final String TRUST_FILE = "lockstep.tls.trust.file";
    /** A certificate that runs out within this long is said at start-up. */
    private static final Duration EXPIRY_WARNING = Duration.ofDays(30);

    /** No TLS. */
    public static final TlsSettings NONE = new TlsSettings(null, EnumSet.noneOf(LinkClass.class));

    /**
     * A member's process offers and accepts only the cheap key-exchange groups, unless the operator chose others with
     * {@code -Djdk.tls.namedGroups}: answering a ClientHello for a finite-field group such as ffdhe8192 costs about
     * 20 ms of the member's thread, against about 1 ms for x25519, and a peer chooses the group. Call first thing in
     * a member's main, before any TLS class loads: the JDK reads the setting once. Clients are left alone.
     */
    public static void restrictKeyExchangeGroups()
    {
        if (null == System.getProperty("jdk.tls.namedGroups"))
        {
            System.setProperty("jdk.tls.namedGroups", "x25519,secp256r1,secp384r1");
        }
    }

    /**
     * @return when the first certificate of this side's chain expires, in Unix seconds (the files in use now, which
     * may have been replaced since start), or 0 without a certificate.
     */
    public long expiry()
    {
        long earliest = Long.MAX_VALUE;
        for (final X509Certificate c : null == files ? List.<X509Certificate>of() : files.chain())
        {
            earliest = Math.min(earliest, c.getNotAfter().toInstant().getEpochSecond());
        }
        return Long.MAX_VALUE == earliest ? 0 : earliest;
    }

    /**
     * @return the classes that must use TLS as the config names them ({@code members,clients}), or {@code no}.
     */
    public String linkNames()
    {
        return links.isEmpty() ? "no" : names(links);
    }

    /**
     * @return the files a tool dials with, or null if tools are not to use TLS.
     */
    public TlsFiles forTools()
    {
        return links.contains(LinkClass.TOOLS) ? files : null;
    }

    /**
     * @throws NodeConfig.ConfigException if a member has TLS files (or is to use TLS) without a certificate and key of
     *                                     its own: a tool host's config, given to a member.
     */
    void checkMember(final String source) throws NodeConfig.ConfigException
    {
        // parse() gives links only with files, so a member without its own certificate is the one case.
        if (null != files && !files.hasIdentity())
        {
            throw new NodeConfig.ConfigException(source + ": TLS (" + LINKS + "=" + linkNames() + ") needs this " +
                "member's " + CERTIFICATE_FILE + " and " + KEY_FILE + ", not only " + TRUST_FILE + ": peers check " +
                "who it is");
        }
    }

    static TlsSettings parse(final String source, final Path configDir, final Properties p,
        final List<String> warnings) throws NodeConfig.ConfigException
    {
        final Set<LinkClass> links;
        try
        {
            links = LinkClass.parse(p.getProperty(LINKS, "none"));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + LINKS + ": " + ex.getMessage());
        }
        final String certificate = p.getProperty(CERTIFICATE_FILE, "").trim();
        final String key = p.getProperty(KEY_FILE, "").trim();
        final String trust = p.getProperty(TRUST_FILE, "").trim();
        if (certificate.isEmpty() != key.isEmpty())
        {
            throw new NodeConfig.ConfigException(source + ": " + CERTIFICATE_FILE + " and " + KEY_FILE + " go " +
                "together: set both or neither");
        }
        if (trust.isEmpty() && (!certificate.isEmpty() || !links.isEmpty()))
        {
            throw new NodeConfig.ConfigException(source + ": TLS needs " + TRUST_FILE + ", the authorities that sign " +
                "the members' certificates");
        }
        if (trust.isEmpty())
        {
            warnings.add("TLS is OFF (" + LINKS + " not set): every link is in the clear");
            return NONE;
        }
        final TlsFiles files;
        try
        {
            if (certificate.isEmpty())
            {
                files = TlsFiles.trusting(configDir.resolve(trust));
            }
            else
            {
                files = TlsFiles.load(configDir.resolve(certificate), configDir.resolve(key),
                    configDir.resolve(trust));
                SecuritySettings.checkPrivate(source, configDir.resolve(key), KEY_FILE, p);
            }
        }
        catch (final IOException ex)
        {
            throw new NodeConfig.ConfigException(source + ": TLS: " + ex.getMessage());
        }
        final Set<LinkClass> clear = EnumSet.complementOf(EnumSet.copyOf(
            links.isEmpty() ? EnumSet.noneOf(LinkClass.class) : links));
        if (!clear.isEmpty())
        {
            warnings.add("links in the clear: " + names(clear) + " (" + LINKS + "=" + (links.isEmpty() ? "none" :
                names(links)) + ")");
        }
        for (final X509Certificate c : files.chain())
        {
            final Duration left = Duration.between(Instant.now(), c.getNotAfter().toInstant());
            if (left.compareTo(EXPIRY_WARNING) < 0)
            {
                warnings.add("TLS certificate " + c.getSubjectX500Principal() + " in " + CERTIFICATE_FILE +
                    (left.isNegative() ? " expired on " : " expires on ") + c.getNotAfter().toInstant() +
                    ": replace the files (they are read again when they change)");
            }
        }
        return new TlsSettings(files, links);
    }

    private static String names(final Set<LinkClass> classes)
    {
        return classes.stream().map(LinkClass::configName).collect(Collectors.joining(","));
    }
}
