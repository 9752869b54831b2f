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
 * The secret every member (and every operator tool) of one cluster holds, proved at connect without being sent:
 * each side of a connection sends a fresh nonce, and each answers with an HMAC-SHA256, under the secret, of both
 * nonces, both ids and its own role in the handshake. A recorded proof is worthless on another connection (the
 * nonces differ) and a proof for one direction cannot be reflected back as the other (the role differs).
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

    private final SecretKeySpec key;

    private ClusterSecret(final byte[] secret)
    {
        if (secret.length < MIN_LENGTH)
        {
            throw new IllegalArgumentException("a secret of " + secret.length + " bytes; at least " +
                MIN_LENGTH + " are needed");
        }
        key = new SecretKeySpec(secret.clone(), "HmacSHA256");
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
     * Read a secret file: its bytes, with trailing white space (a newline an editor added) removed, so that a text
     * secret and the same text with a newline are the same secret.
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
        int length = bytes.length;
        while (length > 0 && Character.isWhitespace(bytes[length - 1]))
        {
            length--;
        }
        if (length < MIN_LENGTH)
        {
            throw new IOException("secret file " + file + " holds " + length + " bytes; at least " +
                MIN_LENGTH + " are needed");
        }
        return new ClusterSecret(Arrays.copyOf(bytes, length));
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
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", ex);
        }
    }

    /**
     * @return true if the received proof is the one the holder of this secret would send (compared in constant
     * time).
     */
    boolean verify(
        final byte[] received, final Role role, final byte[] connectorNonce, final byte[] acceptorNonce,
        final int connectorId, final int acceptorId)
    {
        return MessageDigest.isEqual(received, proof(role, connectorNonce, acceptorNonce, connectorId, acceptorId));
    }

    public String toString()
    {
        return "ClusterSecret[hidden]";
    }
}
