package io.lockstep.cluster.transport;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * What a side of a TLS link proves and whom it believes, read from PEM files: its certificate chain and private key
 * (a member's; optional for clients and tools, which members do not ask to prove anything at the TLS layer), and the
 * certificates of the authorities whose certificates it accepts. TLS 1.3 only, through the JDK's {@link SSLEngine}.
 * <p>
 * The files are read again every {@value #RECHECK_SECONDS} s (by the transport's own thread, on its poll: a few KiB,
 * digested, so that a file copied in with its old time still counts as changed; files on a network file system that
 * can hang would hold that thread, so keep them local): when
 * one of them changed, new connections use the new files, and connections already open keep the ones they started
 * with until they reconnect. Files that do not load (a half-written file, a key that is not the certificate's) are
 * reported if they still do not load at the next look, and the files in use stay in use. Replace a file by writing a
 * new one and renaming it over the old: the key first, then the certificate. One instance may serve several
 * transports (several clients, say) on threads of their own.
 */
public final class TlsFiles
{
    static final String PROTOCOL = "TLSv1.3";
    private static final System.Logger LOGGER = System.getLogger(TlsFiles.class.getName());
    static final long RECHECK_SECONDS = 10;
    private static final long RECHECK_NS = TimeUnit.SECONDS.toNanos(RECHECK_SECONDS);
    private static final char[] NO_PASSWORD = new char[0];

    private final Path certificateFile;
    private final Path keyFile;
    private final Path trustFile;
    private volatile Loaded loaded;
    private volatile long nextCheckNs;
    /** What the files looked like when last loaded, or when a failed load was reported: retried on a change. */
    private String lastStamp;
    /** What the files looked like at a load that failed once, not yet reported. */
    private String failedStamp;

    private record Loaded(SSLContext context, List<X509Certificate> chain)
    {
    }

    private TlsFiles(final Path certificateFile, final Path keyFile, final Path trustFile) throws IOException
    {
        this.certificateFile = certificateFile;
        this.keyFile = keyFile;
        this.trustFile = Objects.requireNonNull(trustFile, "trustFile");
        this.lastStamp = stamp();
        this.loaded = load();
    }

    /**
     * A member's files, or a client's or tool's that also proves a certificate.
     *
     * @param certificateFile the certificate chain, PEM, leaf first: its subject alternative names must include the
     *                        host the member is configured at (an IP address entry for an address).
     * @param keyFile         the leaf's private key, unencrypted PKCS#8 PEM ({@code -----BEGIN PRIVATE KEY-----}).
     * @param trustFile       the certificates, PEM, of the authorities that sign the certificates of the peers.
     * @return the files, loaded and checked.
     * @throws IOException naming the file and what is wrong with it.
     */
    public static TlsFiles load(final Path certificateFile, final Path keyFile, final Path trustFile)
        throws IOException
    {
        return new TlsFiles(Objects.requireNonNull(certificateFile, "certificateFile"),
            Objects.requireNonNull(keyFile, "keyFile"), trustFile);
    }

    /**
     * A client's or tool's files when it only checks who the members are.
     *
     * @param trustFile the certificates, PEM, of the authorities that sign the members' certificates.
     * @return the files, loaded and checked.
     * @throws IOException naming the file and what is wrong with it.
     */
    public static TlsFiles trusting(final Path trustFile) throws IOException
    {
        return new TlsFiles(null, null, trustFile);
    }

    /**
     * @return true if these files hold a certificate and key to prove (a member's must).
     */
    public boolean hasIdentity()
    {
        return null != certificateFile;
    }

    /**
     * @return the certificate chain this side proves, leaf first; empty without one.
     */
    public List<X509Certificate> chain()
    {
        return loaded.chain();
    }

    /**
     * The accepting side of a connection: it proves its certificate, and asks the peer for one (members must give
     * one; clients and tools may not have one).
     */
    SSLEngine acceptingEngine()
    {
        final SSLEngine engine = loaded.context().createSSLEngine();
        engine.setUseClientMode(false);
        final SSLParameters parameters = engine.getSSLParameters();
        parameters.setProtocols(new String[]{ PROTOCOL });
        parameters.setWantClientAuth(true);
        engine.setSSLParameters(parameters);
        return engine;
    }

    /**
     * The dialling side: it checks that the member's certificate is signed by a trusted authority and names the host
     * dialled, as a browser does.
     */
    SSLEngine diallingEngine(final String host, final int port)
    {
        final SSLEngine engine = loaded.context().createSSLEngine(host, port);
        engine.setUseClientMode(true);
        final SSLParameters parameters = engine.getSSLParameters();
        parameters.setProtocols(new String[]{ PROTOCOL });
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(parameters);
        return engine;
    }

    /**
     * Load the files again if one changed since they were last loaded: at most every {@value #RECHECK_SECONDS} s.
     *
     * @return null if nothing changed or the new files are in use; otherwise why the new files were not taken.
     */
    String reloadIfChanged(final long nowNs)
    {
        if (nowNs < nextCheckNs)
        {
            return null;
        }
        synchronized (this)
        {
            // Several transports may share these files, each on its own thread: one of them looks.
            if (nowNs < nextCheckNs)
            {
                return null;
            }
            nextCheckNs = nowNs + RECHECK_NS;
            return reload();
        }
    }

    private String reload()
    {
        final String stamp;
        try
        {
            stamp = stamp();
        }
        catch (final IOException ex)
        {
            return "TLS files not reloaded, the ones loaded before stay in use: " + ex.getMessage();
        }
        if (stamp.equals(lastStamp))
        {
            return null;
        }
        try
        {
            loaded = load();
            lastStamp = stamp;
            LOGGER.log(System.Logger.Level.INFO, "TLS files reloaded: new connections use " + describe());
            return null;
        }
        catch (final IOException | RuntimeException ex)
        {
            // Anything the files make the JDK throw is about the files: it must not leave the member's poll.
            if (!stamp.equals(failedStamp))
            {
                // Perhaps caught between renaming the certificate and renaming its key: look again next time.
                failedStamp = stamp;
                return null;
            }
            lastStamp = stamp;
            return "TLS files changed but do not load (the same for " + RECHECK_SECONDS + " s), the ones loaded " +
                "before stay in use: " + ex.getMessage();
        }
    }

    /**
     * @return what this side proves, for a log line: the certificate's subject and expiry, or that it proves none.
     */
    public String describe()
    {
        final List<X509Certificate> chain = loaded.chain();
        return chain.isEmpty() ? "no certificate of this side's (only trusted authorities from " + trustFile + ")" :
            "certificate " + chain.get(0).getSubjectX500Principal() + " from " + certificateFile + ", expires " +
            chain.get(0).getNotAfter().toInstant();
    }

    /**
     * A digest of the files' contents: a renewed certificate copied in with its old time and the same size (as
     * {@code cp -p} or {@code rsync -a} leave it) is still a change. The files are a few KiB.
     */
    private String stamp() throws IOException
    {
        final MessageDigest digest;
        try
        {
            digest = MessageDigest.getInstance("SHA-256");
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("the JDK has no SHA-256", ex);
        }
        for (final Path file : new Path[]{ certificateFile, keyFile, trustFile })
        {
            if (null != file)
            {
                digest.update(PemFiles.read(file));
                digest.update((byte)0);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /**
     * A JVM whose security settings disable TLS 1.3 ({@code jdk.tls.disabledAlgorithms}) makes contexts that cannot
     * begin a handshake: found here, when the files load, and not on the first connection.
     */
    private static void tryEngines(final SSLContext context) throws IOException
    {
        for (final boolean client : new boolean[]{ true, false })
        {
            final SSLEngine engine = context.createSSLEngine();
            engine.setUseClientMode(client);
            engine.setEnabledProtocols(new String[]{ PROTOCOL });
            try
            {
                engine.beginHandshake();
            }
            catch (final SSLException | IllegalArgumentException ex)
            {
                throw new IOException("this JVM cannot make a " + PROTOCOL + " connection (is it disabled in " +
                    "jdk.tls.disabledAlgorithms of its java.security?): " + ex.getMessage(), ex);
            }
            finally
            {
                engine.closeOutbound();
            }
        }
    }

    private Loaded load() throws IOException
    {
        try
        {
            final KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            int i = 0;
            for (final X509Certificate authority : PemFiles.certificates(trustFile))
            {
                trust.setCertificateEntry("authority-" + i++, authority);
            }
            final TrustManagerFactory trustManagers = TrustManagerFactory.getInstance("PKIX");
            trustManagers.init(trust);

            KeyManagerFactory keyManagers = null;
            List<X509Certificate> chain = List.of();
            if (null != certificateFile)
            {
                chain = PemFiles.certificates(certificateFile);
                final PrivateKey key = PemFiles.privateKey(keyFile);
                PemFiles.checkPair(key, chain.get(0), keyFile, certificateFile);
                final KeyStore identity = KeyStore.getInstance("PKCS12");
                identity.load(null, null);
                identity.setKeyEntry("identity", key, NO_PASSWORD, chain.toArray(new X509Certificate[0]));
                keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                keyManagers.init(identity, NO_PASSWORD);
            }
            final SSLContext context = SSLContext.getInstance(PROTOCOL);
            context.init(null == keyManagers ? null : keyManagers.getKeyManagers(), trustManagers.getTrustManagers(),
                new SecureRandom());
            tryEngines(context);
            return new Loaded(context, chain);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IOException("cannot make a TLS context of " + (null == certificateFile ? "" :
                certificateFile + ", " + keyFile + " and ") + trustFile + ": " + ex.getMessage(), ex);
        }
    }
}
