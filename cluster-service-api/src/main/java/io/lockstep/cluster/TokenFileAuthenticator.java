package io.lockstep.cluster;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Properties;

/**
 * Clients as principals with tokens: credentials {@code principal:token} (US-ASCII), checked against a properties
 * file of {@code principal=<SHA-256 of the token, hex>}, so the file holds no usable token
 * ({@code printf %s "$TOKEN" | sha256sum}). Loaded once at start; compared in constant time.
 */
public final class TokenFileAuthenticator implements ClientAuthenticator
{
    private static final Decision REJECTED = Decision.reject("unknown principal or wrong token");
    private final Map<String, byte[]> tokenHashes = new HashMap<>();

    /**
     * @param file the token file.
     * @throws IOException naming the file and the line that is wrong.
     */
    public TokenFileAuthenticator(final Path file) throws IOException
    {
        final Properties p = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            p.load(reader);
        }
        for (final String principal : p.stringPropertyNames())
        {
            final String hex = p.getProperty(principal).trim();
            if (hex.length() != 64 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0))
            {
                throw new IOException(file + ": the token hash for '" + principal + "' must be 64 hex digits " +
                    "(the SHA-256 of the token), not '" + hex + "'");
            }
            tokenHashes.put(principal, HexFormat.of().parseHex(hex));
        }
        if (tokenHashes.isEmpty())
        {
            throw new IOException(file + " lists no principal: no client could connect");
        }
    }

    public Decision authenticate(final byte[] credentials)
    {
        final String text = new String(credentials, StandardCharsets.US_ASCII);
        final int colon = text.indexOf(':');
        if (colon <= 0)
        {
            return Decision.reject("credentials must be principal:token");
        }
        final String principal = text.substring(0, colon);
        final byte[] expected = tokenHashes.get(principal);
        final byte[] actual = sha256(text.substring(colon + 1).getBytes(StandardCharsets.US_ASCII));
        // Compared even for an unknown principal, so timing does not tell which principals exist.
        final boolean match = MessageDigest.isEqual(null == expected ? new byte[actual.length] : expected, actual);
        return null != expected && match ? Decision.accept(principal) : REJECTED;
    }

    private static byte[] sha256(final byte[] bytes)
    {
        try
        {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is not available in this JVM", ex);
        }
    }
}
