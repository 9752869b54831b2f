package io.lockstep.cluster.transport;

import org.agrona.DirectBuffer;

import java.io.IOException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Set;
import javax.net.ssl.SSLException;

/**
 * What a {@link TcpTransport} does about TLS: which links it dials with TLS and which it refuses in the clear, how it
 * tells a TLS connection from one in the clear on its one port, what it holds a member's certificate to, and how
 * much handshake work it takes on in one poll. Every refusal is returned as a reason for the transport to close the
 * connection with. Owned by the transport's polling thread.
 */
final class TlsPolicy
{
    /**
     * Reads of accepted connections still in their TLS handshake, per poll. Answering a ClientHello (the key exchange
     * and signature) takes about a millisecond of this thread's CPU: without a bound, 256 clients reconnecting to a
     * new leader, or a flood of handshakes, would hold the member's thread for hundreds of milliseconds in one poll,
     * long enough to miss heartbeats. The rest wait for the next polls, in order. Every read until the handshake is
     * done counts, not only the first: a first ClientHello answered by a cheap retry request is followed by the
     * costly one. The queue is bounded by the handshake slots ({@link ConnectionLimits#maxHandshakes()}).
     */
    static final int HANDSHAKE_READS_PER_POLL = 2;
    /** A TLS record's first two bytes when it carries a handshake: content type 22, major version 3. */
    private static final byte HANDSHAKE_RECORD = 0x16;
    private static final byte MAJOR_VERSION = 0x03;

    /** What the first bytes of an accepted connection say. */
    enum FirstBytes
    {
        UNDECIDED,
        CLEAR,
        TLS
    }

    /** Null: no TLS; a TLS handshake from a peer is refused with a reason. */
    private final TlsFiles files;
    /** The link classes that must use TLS: dialled with it, and refused in the clear when accepted. */
    private final Set<LinkClass> required;
    /** Accepted connections whose TLS handshake waits for a later poll's share (at most the handshake bound). */
    private final ArrayDeque<TcpConnection> deferred = new ArrayDeque<>();
    private int handshakeReads;
    /** Records without data all this transport's links may decrypt in one poll. */
    private final QuietRecordShare quietRecords = new QuietRecordShare();

    TlsPolicy(final TlsFiles files, final Set<LinkClass> required)
    {
        this.files = files;
        this.required = required.isEmpty() ? EnumSet.noneOf(LinkClass.class) : EnumSet.copyOf(required);
    }

    /** A new poll: a new share of handshake work. */
    void startPoll()
    {
        handshakeReads = 0;
        quietRecords.startPoll();
    }

    /** @return records without data decrypted so far in this poll, over every link. */
    int quietRecords()
    {
        return quietRecords.used();
    }

    /** @return reads of accepted connections in their TLS handshake so far in this poll. */
    int handshakeReads()
    {
        return handshakeReads;
    }

    /**
     * @return null if the files are unchanged or the new ones are in use; otherwise why the new ones were not taken.
     */
    String reloadIfChanged(final long nowNs)
    {
        return null == files ? null : files.reloadIfChanged(nowNs);
    }

    /**
     * @param self null for a client or tool, which dials with TLS if any class is required of it.
     * @return the TLS layer to dial the peer with, or null to dial in the clear.
     */
    TlsLink dial(final Member self, final Member peer) throws SSLException
    {
        final boolean tls = null == self ? !required.isEmpty() : required.contains(LinkClass.between(self, peer));
        return tls ? new TlsLink(files.diallingEngine(peer.host(), peer.port()), quietRecords) : null;
    }

    /**
     * An accepted connection's first bytes: a TLS record starts 0x16 0x03 (a handshake record, protocol version 3.x),
     * which no frame can, as a frame that long may not come before the handshake. One port serves both, so that a
     * cluster can turn TLS on one member at a time.
     */
    static FirstBytes classify(final DirectBuffer bytes, final int held)
    {
        if (held < 1)
        {
            return FirstBytes.UNDECIDED;
        }
        if (HANDSHAKE_RECORD != bytes.getByte(0))
        {
            return FirstBytes.CLEAR;
        }
        if (held < 2)
        {
            return FirstBytes.UNDECIDED;
        }
        return MAJOR_VERSION == bytes.getByte(1) ? FirstBytes.TLS : FirstBytes.CLEAR;
    }

    /**
     * @return the TLS layer for an accepted connection that started a TLS handshake, or null if this side has no
     * files (see {@link #noFilesReason()}).
     */
    TlsLink accept() throws SSLException
    {
        return null == files ? null : new TlsLink(files.acceptingEngine(), quietRecords);
    }

    static String noFilesReason()
    {
        return "a TLS handshake, but this member has no TLS files (lockstep.tls.certificate.file, " +
            "lockstep.tls.key.file, lockstep.tls.trust.file): the peer encrypts and this member does not";
    }

    /**
     * One of this poll's few reads of accepted connections in their TLS handshake, or a place in the queue for the
     * next polls: its bytes may already be out of the socket, so the selector cannot be relied on to report it again.
     *
     * @return true if the connection may read now.
     */
    boolean takeHandshakeRead(final TcpConnection c)
    {
        if (handshakeReads < HANDSHAKE_READS_PER_POLL)
        {
            handshakeReads++;
            return true;
        }
        if (!c.tlsDeferred)
        {
            c.tlsDeferred = true;
            deferred.add(c);
        }
        return false;
    }

    /**
     * @return the connection waiting longest for its handshake read, if this poll's share has room; else null.
     */
    TcpConnection nextDeferred()
    {
        while (!deferred.isEmpty() && handshakeReads < HANDSHAKE_READS_PER_POLL)
        {
            final TcpConnection c = deferred.poll();
            c.tlsDeferred = false;
            if (c.open)
            {
                return c;
            }
        }
        return null;
    }

    /** The connection closed: it waits for nothing. */
    void forget(final TcpConnection c)
    {
        if (c.tlsDeferred)
        {
            c.tlsDeferred = false;
            deferred.remove(c);
        }
    }

    /**
     * @param tool true for a connection that asked to be trusted as a tool, false for a client.
     * @return why a client or tool connection is refused, or null if its link is as this member requires.
     */
    String clientRefusal(final TcpConnection c, final boolean tool)
    {
        if (null == c.tls && required.contains(tool ? LinkClass.TOOLS : LinkClass.CLIENTS))
        {
            return "refused a " + (tool ? "tool" : "client") + " connection in the clear: this member requires TLS " +
                "of " + (tool ? "tools" : "clients") + " (lockstep.tls.links)";
        }
        return null;
    }

    /**
     * A member's connection is encrypted if its link class requires it, and a member that encrypts proves, with its
     * certificate, the host it is configured at: mutual TLS, held to the member id the connection claims.
     *
     * @return why the connection is refused, or null if it may go on.
     */
    String memberRefusal(final TcpConnection c, final Member self, final Member peer)
    {
        final LinkClass linkClass = LinkClass.between(self, peer);
        if (null == c.tls)
        {
            return required.contains(linkClass) ? "refused member " + peer.id() + " in the clear: this member " +
                "requires TLS on " + linkClass.configName() + " links (lockstep.tls.links); give member " +
                peer.id() + " the same setting" : null;
        }
        final X509Certificate certificate = c.tls.peerCertificate();
        if (null == certificate)
        {
            return "refused member " + peer.id() + ": it connected with TLS but presented no certificate (members " +
                "prove theirs: lockstep.tls.certificate.file)";
        }
        if (!CertificateHosts.covers(certificate, peer.host()))
        {
            return "refused member " + peer.id() + ": its TLS certificate (" + certificate.getSubjectX500Principal() +
                ") does not name " + peer.host() + ", the host member " + peer.id() + " is configured at (a subject " +
                "alternative name is needed)";
        }
        return null;
    }

    /**
     * The most of an exception's message a TLS failure repeats: the JDK's own words fit, a peer's bytes are cut, and
     * the hint after them fits in what a log line or {@code tool errors} keeps ({@link PrintableText#MAX_CHARS})
     * unless those bytes escape to several characters each.
     */
    static final int MAX_EXCEPTION_CHARS = 150;

    /** Why a TLS link failed, with what usually causes it; {@code ex} null for a link closed in its handshake. */
    static String failure(final TcpConnection c, final IOException ex)
    {
        final String who = c.connectTo >= 0 ? "member " + c.connectTo :
            "an accepted connection from " + TcpTransport.remoteOf(c);
        if (null == ex)
        {
            return "TLS with " + who + " closed during its handshake: the peer refused this side's certificate, " +
                "has no TLS files, or hung up";
        }
        // The JDK quotes some of what the peer sent (a malformed server name, whole): cut here, escaped where it is
        // printed or recorded.
        return "TLS with " + who + " failed: " + PrintableText.cut(ex.getMessage(), MAX_EXCEPTION_CHARS) +
            (null == c.tls || c.tls.handshakeDone() ? "" : handshakeHint(ex));
    }

    /**
     * What usually causes a handshake to fail this way: a certificate refused, or bytes that are not TLS at all
     * (another service at that address, a scanner); other failures (no cipher suite or key type in common) are
     * named by the message alone.
     */
    static String handshakeHint(final Throwable ex)
    {
        if (isCertificateProblem(ex))
        {
            return " (is each side's certificate signed by an authority in the other's lockstep.tls.trust.file, and " +
                "does it name the host the member is configured at?)";
        }
        return isNotTls(ex) ? " (the peer does not speak TLS: is a Lockstep member, or a client with TLS files, " +
            "at that address?)" : "";
    }

    /**
     * A certificate refused here: the JDK's checks (an unknown authority, a wrong host, expired) fail with a
     * {@link CertificateException} in the cause chain; or refused by the peer, which says so in an alert. Only the
     * start of a message is read: some of the JDK's messages quote what the peer sent (a malformed server name), and
     * a peer must not choose the hint an operator is given by putting its words in that.
     */
    static boolean isCertificateProblem(final Throwable ex)
    {
        for (Throwable t = ex; null != t; t = t.getCause())
        {
            final String message = null == t.getMessage() ? "" : t.getMessage();
            if (t instanceof CertificateException || message.startsWith("Invalid Certificate message") ||
                message.startsWith("Empty client certificate chain") ||
                message.startsWith("Empty server certificate chain") || isCertificateAlert(message))
            {
                return true;
            }
        }
        return false;
    }

    /** A TLS alert about a certificate or its authority, as the JDK words one it received. */
    private static boolean isCertificateAlert(final String message)
    {
        final String prefix = "Received fatal alert: ";
        if (!message.startsWith(prefix))
        {
            return false;
        }
        final String alert = message.substring(prefix.length());
        return alert.contains("certificate") || alert.equals("unknown_ca");
    }

    /** Bytes that do not parse as TLS records: the JDK's words for them, and this side's record bound. */
    static boolean isNotTls(final Throwable ex)
    {
        final String message = null == ex.getMessage() ? "" : ex.getMessage();
        return message.startsWith("Unrecognized SSL message") ||
            message.startsWith("Unsupported or unrecognized SSL message") ||
            message.startsWith("Unrecognized record version") || message.startsWith("a TLS record longer than") ||
            message.startsWith("Input record too big");
    }
}
