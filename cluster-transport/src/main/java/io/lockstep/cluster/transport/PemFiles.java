package io.lockstep.cluster.transport;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Certificates and keys in PEM files, the format every PKI hands out (etcd, Kafka and nginx read the same files).
 * Each method names the file and what is wrong with it, because a TLS set-up mistake is found at start, by an
 * operator, and should not read like a stack trace.
 */
final class PemFiles
{
    private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String KEY_END = "-----END PRIVATE KEY-----";
    /** Key algorithms tried in turn: PKCS#8 says which, but the JDK has no public parser for it. */
    private static final String[] KEY_ALGORITHMS = { "EC", "RSA", "Ed25519", "Ed448" };

    /** Far more than any chain or key: a file this long is not one, and reading it would cost the member's heap. */
    static final int MAX_FILE_BYTES = 1024 * 1024;
    private static final int MIN_RSA_BITS = 2048;

    private PemFiles()
    {
    }

    /**
     * @return the file's bytes, read only if it is a regular file of at most {@value #MAX_FILE_BYTES} bytes: a named
     * pipe would block the reading thread, a huge file would fill its heap. The length is bounded by the read
     * itself; the regular-file check comes before the open, so a pipe swapped in between the two could still block
     * it, but only someone who can already write the member's key can do that.
     * @throws IOException naming the file and what it is instead.
     */
    static byte[] read(final Path file) throws IOException
    {
        if (!Files.isRegularFile(file))
        {
            throw new IOException(file + " not found (or not a regular file)");
        }
        // Read through one handle, at most one byte past the bound: a file swapped for a longer one after the
        // check above still costs no more than the bound.
        try (InputStream in = Files.newInputStream(file))
        {
            final byte[] bytes = in.readNBytes(MAX_FILE_BYTES + 1);
            if (bytes.length > MAX_FILE_BYTES)
            {
                throw new IOException(file + " is over " + MAX_FILE_BYTES + " bytes: too long for a certificate " +
                    "or key file");
            }
            return bytes;
        }
    }

    /**
     * @return the X.509 certificates in the file, in order (a chain: the leaf first).
     * @throws IOException naming the file if it holds none, or something that is not a certificate.
     */
    static List<X509Certificate> certificates(final Path file) throws IOException
    {
        final byte[] bytes = read(file);
        final List<X509Certificate> certificates = new ArrayList<>();
        try
        {
            for (final Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(
                new ByteArrayInputStream(bytes)))
            {
                certificates.add((X509Certificate)c);
            }
        }
        catch (final CertificateException ex)
        {
            throw new IOException(file + " is not a PEM file of X.509 certificates: " + ex.getMessage(), ex);
        }
        if (certificates.isEmpty())
        {
            throw new IOException(file + " holds no certificate (expected -----BEGIN CERTIFICATE----- blocks)");
        }
        return certificates;
    }

    /**
     * @return the unencrypted PKCS#8 private key in the file.
     * @throws IOException naming the file, and the conversion to run if the key is in another PEM form.
     */
    static PrivateKey privateKey(final Path file) throws IOException
    {
        final String text = new String(read(file), StandardCharsets.US_ASCII);
        final int begin = text.indexOf(KEY_BEGIN);
        final int end = text.indexOf(KEY_END);
        if (begin < 0 || end < begin)
        {
            final String hint = text.contains("ENCRYPTED PRIVATE KEY") ? "it is encrypted" :
                begin >= 0 ? "it is cut short: no " + KEY_END + " line" :
                text.contains("PRIVATE KEY") ? "it is in a traditional (PKCS#1 or SEC1) form" : "it holds no key";
            throw new IOException(file + " is not an unencrypted PKCS#8 PEM private key (" + hint + "): convert it " +
                "with openssl pkcs8 -topk8 -nocrypt -in " + file.getFileName() + " -out key.pem");
        }
        final byte[] der;
        try
        {
            der = Base64.getMimeDecoder().decode(text.substring(begin + KEY_BEGIN.length(), end));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException(file + ": the key is not valid base64: " + ex.getMessage(), ex);
        }
        for (final String algorithm : KEY_ALGORITHMS)
        {
            try
            {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            }
            catch (final GeneralSecurityException | RuntimeException ignored)
            {
                // Not this algorithm's key: try the next.
            }
        }
        throw new IOException(file + " holds a private key of none of the algorithms " + String.join(", ",
            KEY_ALGORITHMS));
    }

    /**
     * A key that is not the certificate's would fail every handshake with a message about the peer; this says so at
     * load, about the files.
     *
     * @throws IOException if the key cannot sign what the certificate's public key verifies.
     */
    static void checkPair(final PrivateKey key, final X509Certificate certificate, final Path keyFile,
        final Path certificateFile) throws IOException
    {
        if (key instanceof RSAKey rsa && rsa.getModulus().bitLength() < MIN_RSA_BITS)
        {
            throw new IOException(keyFile + " holds an RSA key of " + rsa.getModulus().bitLength()
                + " bits: at least " +
                MIN_RSA_BITS + ", or an EC key");
        }
        final String algorithm = switch (key.getAlgorithm())
        {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            default -> key.getAlgorithm();
        };
        final byte[] probe = "lockstep key check".getBytes(StandardCharsets.US_ASCII);
        try
        {
            final Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            final byte[] signature = signer.sign();
            final Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            if (verifier.verify(signature))
            {
                return;
            }
        }
        catch (final GeneralSecurityException ex)
        {
            // A key of another algorithm than the certificate's: the same answer as a wrong key.
        }
        throw new IOException(keyFile + " is not the private key of the first certificate in " + certificateFile +
            " (" + certificate.getSubjectX500Principal() + ")");
    }
}
