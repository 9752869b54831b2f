package io.lockstep.cluster.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A secret proved at connect without being sent: the member secret members prove to each other, or the tool secret
 * operator tools prove to members. Each side of a connection sends a fresh nonce, and each answers with an
 * HMAC-SHA256, under the secret, of both nonces, both ids and its own role in the handshake. A recorded proof is
 * worthless on another connection (the nonces differ) and a proof for one direction cannot be reflected back as the
 * other (the role differs). While a secret is rotated a member proves one and accepts proofs made with either (see
 * {@link #alsoAccepting}).
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
        new SecureRandom().nextBytes(bytes);
        final String text = HexFormat.of().formatHex(bytes);
        Files.writeString(file, text + "\n", StandardCharsets.US_ASCII);
        try
        {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
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
            throw new IOException("secret file not found: " + file + " (copy it from a host of the cluster that " +
                "has it; only for a new cluster, create it with: bin/lockstep secret " + file + ")");
        }
        int length = bytes.length;
        while (length > 0 && Character.isWhitespace(bytes[length - 1]))
        {
            length--;
        }
        if (length < MIN_LENGTH)
        {
            throw new IOException("secret file " + file + " holds " + length + " bytes; at least " + MIN_LENGTH +
                " are needed");
        }
        return new ClusterSecret(Arrays.copyOf(bytes, length));
    }

    /**
     * @param other another secret.
     * @return true if a secret this one proves or accepts is one the other proves or accepts: a tool secret must
     * share none with the member secret, or a tool host could prove a member's id.
     */
    public boolean sharesKeyWith(final ClusterSecret other)
    {
        for (final SecretKeySpec mine : keys)
        {
            for (final SecretKeySpec theirs : other.keys)
            {
                if (MessageDigest.isEqual(mine.getEncoded(), theirs.getEncoded()))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * While a secret is rotated: prove this one, and accept proofs made with either.
     *
     * @param other the secret also accepted (the old one, or the new one not yet proved with).
     * @return a secret that proves this one and accepts both.
     */
    public ClusterSecret alsoAccepting(final ClusterSecret other)
    {
        final byte[][] secrets = new byte[keys.length + 1][];
        for (int i = 0; i < keys.length; i++)
        {
            secrets[i] = keys[i].getEncoded();
        }
        secrets[keys.length] = other.keys[0].getEncoded();
        return new ClusterSecret(secrets);
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
