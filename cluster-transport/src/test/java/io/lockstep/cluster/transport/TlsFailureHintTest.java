package io.lockstep.cluster.transport;

import org.junit.jupiter.api.Test;

import java.security.cert.CertificateException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failed handshake is explained by what failed: an operator chasing a wrong trust file must not be told the peer
 * does not speak TLS, nor one whose port a scanner probes be sent to check certificates.
 */
class TlsFailureHintTest
{
    @Test
    void aCertificateRefusedHereOrByThePeersAlertPointsAtTheTrustFile()
    {
        final SSLHandshakeException pkix = new SSLHandshakeException("PKIX path building failed: unable to find " +
            "valid certification path to requested target");
        pkix.initCause(new CertificateException("unable to find valid certification path"));
        final SSLHandshakeException alert = new SSLHandshakeException("Received fatal alert: unknown_ca");
        final SSLHandshakeException badCertificate = new SSLHandshakeException("Received fatal alert: bad_certificate");
        final SSLException invalid = new SSLException("Invalid Certificate message");

        for (final Exception ex : new Exception[] { pkix, alert, badCertificate, invalid })
        {
            assertTrue(TlsPolicy.handshakeHint(ex).contains("lockstep.tls.trust.file"), ex.getMessage());
        }
    }

    @Test
    void bytesThatAreNotTlsSayTheyAreNot()
    {
        for (final String message : new String[] {
            "Unsupported or unrecognized SSL message", "Unrecognized SSL message, plaintext connection?",
            "a TLS record longer than 16709 bytes", "Input record too big: max = 16709 len = 65540" })
        {
            assertTrue(TlsPolicy.handshakeHint(new SSLException(message)).contains("does not speak TLS"), message);
        }
    }

    @Test
    void otherHandshakeFailuresAreNamedByTheirMessageAlone()
    {
        assertEquals("", TlsPolicy.handshakeHint(new SSLHandshakeException("No appropriate protocol (protocol is " +
            "disabled or cipher suites are inappropriate)")));
        assertEquals("", TlsPolicy.handshakeHint(new SSLHandshakeException("Received fatal alert: " +
            "handshake_failure")));
    }

    @Test
    void aPeersWordsQuotedInTheMessageDoNotChooseTheHint()
    {
        // The JDK quotes a malformed server name whole: a peer could put a hint's trigger words in it.
        for (final String name : new String[] { "a certificate", "x unknown_ca", "Unrecognized SSL message, " +
            "plaintext connection?", "Received fatal alert: bad_certificate" })
        {
            final SSLException quoting = new SSLException("Illegal server name, type=host_name(0), name=" + name +
                ", value={00}");
            assertEquals("", TlsPolicy.handshakeHint(quoting), name);
        }
    }
}
