package io.lockstep.cluster.transport;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * A secret proved at connect without being sent: the member secret members prove to each other, or the tool secret
 * operator tools prove to members. Each side of a connection sends a fresh nonce, and each answers with an
 * HMAC-SHA256, under the secret, of both nonces, both ids and its own role in the handshake. A recorded proof is
 * worthless on another connection (the nonces differ) and a proof for one direction cannot be reflected back as the
 * other (the role differs). While a secret is rotated its file holds two: the new or the old one proved with, and
 * both accepted (see {@link #read}).
 * <p>
 * Only used while a connection is set up: allocating here is fine.
 */
public final class ClusterSecret
{
    /** Shorter secrets are refused: 16 bytes is the HMAC key length below which guessing becomes the weak point. */
    public static final int MIN_LENGTH = 16;
    public static final int PROOF_LENGTH = 32;
    public static final int NONCE_LENGTH = 16;

    /** Which side of the handshake a proof comes from. */
    enum Role
    {
        ACCEPTOR, CONNECTOR
    }

    /** The secret proved with, then (while one is being rotated) the other one accepted. */
    private final SecretKeySpec[] keys;

    private ClusterSecret(final byte[]... secrets)
    {
        keys = new SecretKeySpec[secrets.length];
        for (int i = 0; i < secrets.length; i++)
        {
            if (secrets[i].length < MIN_LENGTH)
            {
                throw new IllegalArgumentException("a secret of " + secrets[i].length + " bytes; at least " +
                    MIN_LENGTH + " are needed");
            }
            keys[i] = new SecretKeySpec(secrets[i].clone(), "HmacSHA256");
        }
    }

    /**
     * @param secret the secret's bytes (at least {@link #MIN_LENGTH}).
     * @return the secret.
     */
    public static ClusterSecret of(final byte[] secret)
    {
        return new ClusterSecret(secret);
    }

    /**
     * Make a fresh random secret (32 bytes, as hex text) and write it to a file, readable by its owner only where
     * the file system allows: for test clusters, and for a first setup.
     *
     * @return the secret written.
     * @throws IOException naming the file.
     */
    public static ClusterSecret writeNew(final Path file) throws IOException
    {
        final byte[] bytes = new byte[32];
        new java.security.SecureRandom().nextBytes(bytes);
        final String text = java.util.HexFormat.of().formatHex(bytes);
        Files.writeString(file, text + "\n", StandardCharsets.US_ASCII);
        try
        {
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        }
        catch (final UnsupportedOperationException ignore)
        {
            // Not a POSIX file system: the file keeps its default permissions.
        }
        return of(text.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Read a secret file. A text file may hold two secrets, one per line, while one is being rotated: the first is
     * the one proved with, and proofs under either are accepted (so members that prove the old one and members that
     * prove the new one still meet). Trailing white space on a line (a newline an editor added) is not part of the
     * secret. A file that is not printable text is one secret, its bytes as they are.
     *
     * @param file the file (keep it readable by the cluster's user only).
     * @return the secret.
     * @throws IOException with a message naming the file and the problem.
     */
    public static ClusterSecret read(final Path file) throws IOException
    {
        final byte[] bytes;
        try
        {
            bytes = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            throw new IOException("secret file not found: " + file + " (create one with: head -c 32 " +
                "/dev/urandom | base64 > " + file + ")");
        }
        final byte[][] secrets = isText(bytes) ? lines(bytes) : new byte[][]{ trimmed(bytes, 0, bytes.length) };
        if (secrets.length > 2)
        {
            throw new IOException("secret file " + file + " holds " + secrets.length + " lines; at most two (the " +
                "secret proved with, then the one also accepted while rotating)");
        }
        for (final byte[] secret : secrets)
        {
            if (secret.length < MIN_LENGTH)
            {
                throw new IOException("secret file " + file + " holds a secret of " + secret.length + " bytes; at " +
                    "least " + MIN_LENGTH + " are needed");
            }
        }
        return new ClusterSecret(secrets);
    }

    private static boolean isText(final byte[] bytes)
    {
        for (final byte b : bytes)
        {
            if ((b < 0x20 || b > 0x7e) && b != '\n' && b != '\r' && b != '\t')
            {
                return false;
            }
        }
        return true;
    }

    /** The non-empty lines, each without trailing white space. */
    private static byte[][] lines(final byte[] bytes)
    {
        final java.util.List<byte[]> lines = new java.util.ArrayList<>();
        int start = 0;
        for (int i = 0; i <= bytes.length; i++)
        {
            if (i == bytes.length || bytes[i] == '\n')
            {
                final byte[] line = trimmed(bytes, start, i);
                if (line.length > 0)
                {
                    lines.add(line);
                }
                start = i + 1;
            }
        }
        return lines.toArray(new byte[0][]);
    }

    private static byte[] trimmed(final byte[] bytes, final int from, final int to)
    {
        int end = to;
        while (end > from && Character.isWhitespace(bytes[end - 1]))
        {
            end--;
        }
        return Arrays.copyOfRange(bytes, from, end);
    }

    /**
     * The proof one side of a handshake sends.
     */
    byte[] proof(
        final Role role, final byte[] connectorNonce, final byte[] acceptorNonce, final int connectorId,
        final int acceptorId)
    {
        try
        {
            return proof(keys[0], role, connectorNonce, acceptorNonce, connectorId, acceptorId);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", ex);
        }
    }

    private static byte[] proof(
        final SecretKeySpec key, final Role role, final byte[] connectorNonce, final byte[] acceptorNonce,
        final int connectorId, final int acceptorId) throws GeneralSecurityException
    {
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(key);
        mac.update("lockstep-hello-v1".getBytes(StandardCharsets.US_ASCII));
        mac.update((byte)role.ordinal());
        mac.update(connectorNonce);
        mac.update(acceptorNonce);
        mac.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(connectorId).putInt(acceptorId)
            .array());
        return mac.doFinal();
    }

    /**
     * @return true if the received proof is the one a holder of this secret (or, while rotating, of the other secret
     * in its file) would send, compared in constant time.
     */
    boolean verify(
        final byte[] received, final Role role, final byte[] connectorNonce, final byte[] acceptorNonce,
        final int connectorId, final int acceptorId)
    {
        try
        {
            // Every key is checked, whichever matches: the time taken says nothing about which one did.
            boolean match = false;
            for (final SecretKeySpec key : keys)
            {
                match |= MessageDigest.isEqual(received, proof(key, role, connectorNonce, acceptorNonce, connectorId,
                    acceptorId));
            }
            return match;
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", ex);
        }
    }

    public String toString()
    {
        return "ClusterSecret[hidden]";
    }
}
