package io.lockstep.consensus.node;

import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.TokenFileAuthenticator;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.ConnectionLimits;
import io.lockstep.consensus.service.SessionLimits;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Who a member lets in: the member secret members prove to each other at connect, the tool secret operator tools
 * prove, and the authenticator client connects go through.
 * <pre>
 * lockstep.cluster.secret.file   a file holding the member secret (at least 16 bytes; the same file on every
 *                                member, and on no other host), relative to the config file's directory. Without
 *                                it, any process that reaches a member's port can claim to be a member or run tool
 *                                commands, and the member says so at start-up.
 * lockstep.tool.secret.file      a file holding the tool secret (at least 16 bytes, different from the member
 *                                secret): members trust tool requests only from connections that proved it, and the
 *                                tool (bin/lockstep tool) proves it. A tool host holds this file only, so it cannot
 *                                pose as a member. Without it (and with a member secret) no tool is trusted.
 * lockstep.cluster.secret.accept.file, lockstep.tool.secret.accept.file
 *                                while a secret is rotated: a second secret accepted besides the one proved with
 * lockstep.secret.permissions.check  true (default): a secret file that its group or others may read or write is
 *                                refused at start (chmod 600 it); false accepts it, for file systems without POSIX
 *                                permissions that still keep it private
 * lockstep.client.authenticator  accept-all (default), token-file, or a ClientAuthenticator class name
 * lockstep.client.tokens.file    for token-file: principal=SHA-256-hex-of-token lines, relative to the config file
 * lockstep.client.connections.max  client and tool connections open at once (default 256); one more is refused
 * lockstep.client.handshakes.max   connections still in their handshake (default 64); one more evicts the oldest
 * lockstep.client.idle.timeout.ms  a client or tool connection silent this long is closed (default 30000, at least
 *                                10000: clients and tools send a heartbeat every 3 s on every connection)
 * lockstep.client.buffers.max.bytes  what all client and tool connections' buffers may hold beyond their first 8 KiB
 *                                (default 67108864); a connection that would need more is closed
 * lockstep.client.sessions.per.connection   sessions open on one connection (default 4)
 * lockstep.client.sessions.per.principal    sessions open for one principal (default 4096: the table's size)
 * lockstep.client.session.opens.per.second  opens one connection may ask for in a second (default 20)
 * lockstep.tls.links, lockstep.tls.certificate.file, lockstep.tls.key.file, lockstep.tls.trust.file: see TlsSettings
 * </pre>
 * Member connections never count against the client bounds (see {@link ConnectionLimits}).
 *
 * @param secret        the member secret, or null for none.
 * @param toolSecret    the tool secret, or null for none.
 * @param authenticator decides on client connects.
 * @param limits        what connections that are not members may hold.
 * @param sessionLimits what one client may open.
 * @param tls           which links are encrypted, and with what (see {@link TlsSettings}).
 * @param warnings      what is open, said at start-up.
 */
public record SecuritySettings(
    ClusterSecret secret,
    ClusterSecret toolSecret,
    ClientAuthenticator authenticator,
    ConnectionLimits limits,
    SessionLimits sessionLimits,
    TlsSettings tls,
    List<String> warnings)
{
    public static final String SECRET_FILE = "lockstep.cluster.secret.file";
    public static final String TOOL_SECRET_FILE = "lockstep.tool.secret.file";
    public static final String CHECK_PERMISSIONS = "lockstep.secret.permissions.check";
    public static final String SECRET_ACCEPT_FILE = "lockstep.cluster.secret.accept.file";
    public static final String TOOL_SECRET_ACCEPT_FILE = "lockstep.tool.secret.accept.file";
    public static final String CLIENT_AUTHENTICATOR = "lockstep.client.authenticator";
    public static final String TOKENS_FILE = "lockstep.client.tokens.file";
    public static final String CLIENT_CONNECTIONS_MAX = "lockstep.client.connections.max";
    public static final String CLIENT_HANDSHAKES_MAX = "lockstep.client.handshakes.max";
    public static final String CLIENT_IDLE_TIMEOUT_MS = "lockstep.client.idle.timeout.ms";
    public static final String CLIENT_BUFFERS_MAX_BYTES = "lockstep.client.buffers.max.bytes";
    public static final String SESSIONS_PER_CONNECTION = "lockstep.client.sessions.per.connection";
    public static final String SESSIONS_PER_PRINCIPAL = "lockstep.client.sessions.per.principal";
    public static final String SESSION_OPENS_PER_SECOND = "lockstep.client.session.opens.per.second";

    /** No secret, every client accepted: for tests and tools that build members in code. */
    public static final SecuritySettings OPEN = new SecuritySettings(null, null, ClientAuthenticator.ACCEPT_ALL,
        ConnectionLimits.DEFAULTS, SessionLimits.DEFAULTS, TlsSettings.NONE, List.of());

    /**
     * What a member started from code was handed as objects rather than named in keys (see {@link ClusterNodeBuilder}):
     * each, where not null, takes the place of its key, which must then be unset.
     *
     * @param secret        in place of {@link #SECRET_FILE}.
     * @param toolSecret    in place of {@link #TOOL_SECRET_FILE}.
     * @param authenticator in place of {@link #CLIENT_AUTHENTICATOR}.
     */
    record Given(ClusterSecret secret, ClusterSecret toolSecret, ClientAuthenticator authenticator)
    {
        static final Given NONE = new Given(null, null, null);

        void refuseKeysBeside(final String source, final Properties p) throws NodeConfig.ConfigException
        {
            refuseBoth(source, p, secret, SECRET_FILE, "secret");
            refuseBoth(source, p, toolSecret, TOOL_SECRET_FILE, "toolSecret");
            refuseBoth(source, p, authenticator, CLIENT_AUTHENTICATOR, "authenticator");
        }

        private static void refuseBoth(
            final String source, final Properties p, final Object given, final String key, final String method)
            throws NodeConfig.ConfigException
        {
            if (null != given && !p.getProperty(key, "").trim().isEmpty())
            {
                throw new NodeConfig.ConfigException(source + ": " + key + " is set and " + method + "(...) was " +
                    "given too: say which one, not both");
            }
        }
    }

    static SecuritySettings parse(final String source, final Path configDir, final Properties p)
        throws NodeConfig.ConfigException
    {
        return parse(source, configDir, p, Given.NONE);
    }

    // Longer than the method bound: one key after another, in the reference's order.
    @SuppressWarnings("checkstyle:MethodLength")
    static SecuritySettings parse(final String source, final Path configDir, final Properties p, final Given given)
        throws NodeConfig.ConfigException
    {
        given.refuseKeysBeside(source, p);
        final List<String> warnings = new ArrayList<>();
        ClusterSecret secret = null == given.secret() ? null : givenWithAccepted(source, configDir, p,
            SECRET_ACCEPT_FILE, given.secret());
        final String secretFile = p.getProperty(SECRET_FILE, "").trim();
        // A secret handed over in code is the caller's to keep: no file, and no file's permissions to check.
        if (null == secret && secretFile.isEmpty())
        {
            warnings.add("member authentication is OFF (" + SECRET_FILE + " not set): any process that reaches " +
                "this member's port can claim to be a member or run tool commands");
        }
        else if (null == secret)
        {
            try
            {
                secret = withAccepted(source, configDir, p, SECRET_ACCEPT_FILE,
                    readPrivate(source, configDir.resolve(secretFile), SECRET_FILE, p));
            }
            catch (final IOException | IllegalArgumentException ex)
            {
                throw new NodeConfig.ConfigException(source + ": " + SECRET_FILE + ": " + ex.getMessage());
            }
        }
        refuseSharedFiles(source, configDir, p);
        final ClusterSecret toolSecret = null != given.toolSecret() ?
            givenWithAccepted(source, configDir, p, TOOL_SECRET_ACCEPT_FILE, given.toolSecret()) :
            toolSecret(source, configDir, p, null != secret, warnings);
        if (null != secret && null != toolSecret && secret.sharesKeyWith(toolSecret))
        {
            throw new NodeConfig.ConfigException(source + ": the tool secret is also a member secret (the same " +
                "bytes): a tool host holding it could pose as a member. Give tools a secret of their own (" +
                TOOL_SECRET_FILE + ")");
        }
        final String name = null != given.authenticator() ? "given" :
            p.getProperty(CLIENT_AUTHENTICATOR, "accept-all").trim();
        final ClientAuthenticator authenticator;
        switch (name)
        {
            case "given" ->
            {
                authenticator = given.authenticator();
                if (ClientAuthenticator.ACCEPT_ALL == authenticator)
                {
                    warnings.add("client authentication is OFF (authenticator ACCEPT_ALL): every client that " +
                        "reaches the leader may open a session");
                }
            }
            case "accept-all" ->
            {
                authenticator = ClientAuthenticator.ACCEPT_ALL;
                warnings.add("client authentication is OFF (" + CLIENT_AUTHENTICATOR + "=accept-all): every " +
                    "client that reaches the leader may open a session");
            }
            case "token-file" ->
            {
                final String tokens = p.getProperty(TOKENS_FILE, "").trim();
                if (tokens.isEmpty())
                {
                    throw new NodeConfig.ConfigException(source + ": " + CLIENT_AUTHENTICATOR + "=token-file needs " +
                        TOKENS_FILE);
                }
                try
                {
                    authenticator = new TokenFileAuthenticator(configDir.resolve(tokens));
                }
                catch (final IOException ex)
                {
                    throw new NodeConfig.ConfigException(source + ": " + TOKENS_FILE + ": " + ex.getMessage());
                }
            }
            default -> authenticator = instantiate(source, name);
        }
        final TlsSettings tls = TlsSettings.parse(source, configDir, p, warnings);
        return new SecuritySettings(secret, toolSecret, authenticator, limits(source, p), sessionLimits(source, p),
            tls, List.copyOf(warnings));
    }

    private static ClusterSecret toolSecret(
        final String source, final Path configDir, final Properties p, final boolean memberSecret,
        final List<String> warnings) throws NodeConfig.ConfigException
    {
        final String file = p.getProperty(TOOL_SECRET_FILE, "").trim();
        if (file.isEmpty())
        {
            if (memberSecret)
            {
                warnings.add("no tool is trusted (" + TOOL_SECRET_FILE + " not set): tool commands are refused");
            }
            return null;
        }
        try
        {
            return withAccepted(source, configDir, p, TOOL_SECRET_ACCEPT_FILE,
                readPrivate(source, configDir.resolve(file), TOOL_SECRET_FILE, p));
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + TOOL_SECRET_FILE + ": " + ex.getMessage());
        }
    }

    /**
     * No file may serve as a member secret (proved or accepted) and as a tool secret (proved or accepted): a tool
     * host holding it could prove a member's id.
     */
    private static void refuseSharedFiles(final String source, final Path configDir, final Properties p)
        throws NodeConfig.ConfigException
    {
        for (final String memberKey : new String[]{ SECRET_FILE, SECRET_ACCEPT_FILE })
        {
            for (final String toolKey : new String[]{ TOOL_SECRET_FILE, TOOL_SECRET_ACCEPT_FILE })
            {
                final String member = p.getProperty(memberKey, "").trim();
                final String tool = p.getProperty(toolKey, "").trim();
                if (!member.isEmpty() && !tool.isEmpty() &&
                    configDir.resolve(member).normalize().equals(configDir.resolve(tool).normalize()))
                {
                    throw new NodeConfig.ConfigException(source + ": " + toolKey + " and " + memberKey + " name the " +
                        "same file: a tool secret must differ from every member secret, or a tool host could pose " +
                        "as a member");
                }
            }
        }
    }

    /** The secret, also accepting the one the accept key names, if it is set (while rotating). */
    /** A secret handed over in code, also accepting the one the accept key names, as a file's would. */
    private static ClusterSecret givenWithAccepted(
        final String source, final Path configDir, final Properties p, final String key, final ClusterSecret secret)
        throws NodeConfig.ConfigException
    {
        try
        {
            return withAccepted(source, configDir, p, key, secret);
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + key + ": " + ex.getMessage());
        }
    }

    private static ClusterSecret withAccepted(
        final String source, final Path configDir, final Properties p, final String key, final ClusterSecret secret)
        throws IOException, NodeConfig.ConfigException
    {
        final String file = p.getProperty(key, "").trim();
        if (file.isEmpty())
        {
            return secret;
        }
        if (!Files.exists(configDir.resolve(file)))
        {
            throw new NodeConfig.ConfigException(source + ": " + key + ": " + configDir.resolve(file) + " not found: " +
                "while rotating, this is the other secret (the old one, or the new one not yet proved with): copy it " +
                "here, or remove the key once the rotation is done");
        }
        try
        {
            return secret.alsoAccepting(readPrivate(source, configDir.resolve(file), key, p));
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + key + ": " + ex.getMessage());
        }
    }

    /**
     * A secret file anyone but its owner may read is a secret shared with every account on the host: refused, naming
     * the file and the fix, unless the operator turned the check off.
     */
    private static ClusterSecret readPrivate(final String source, final Path file, final String key, final Properties p)
        throws IOException, NodeConfig.ConfigException
    {
        final ClusterSecret secret = ClusterSecret.read(file);
        checkPrivate(source, file, key, p);
        return secret;
    }

    /**
     * A file of secrets (a secret, a TLS private key) that anyone but its owner may read or write is refused, naming
     * the file and the fix, unless the operator turned the check off.
     */
    static void checkPrivate(final String source, final Path file, final String key, final Properties p)
        throws IOException, NodeConfig.ConfigException
    {
        if (!Boolean.parseBoolean(p.getProperty(CHECK_PERMISSIONS, "true").trim()))
        {
            return;
        }
        final Set<PosixFilePermission> permissions;
        try
        {
            permissions = Files.getPosixFilePermissions(file);
        }
        catch (final UnsupportedOperationException ex)
        {
            // No POSIX permissions on this file system: nothing to check.
            return;
        }
        for (final PosixFilePermission permission : permissions)
        {
            if (permission != PosixFilePermission.OWNER_READ && permission != PosixFilePermission.OWNER_WRITE &&
                permission != PosixFilePermission.OWNER_EXECUTE)
            {
                throw new NodeConfig.ConfigException(source + ": " + key + ": " + file + " may be read or written by " +
                    "its group or others (" + PosixFilePermissions.toString(permissions) + "): chmod 600 " + file +
                    ", or set " + CHECK_PERMISSIONS + "=false where the file system keeps it private otherwise");
            }
        }
    }

    private static SessionLimits sessionLimits(final String source, final Properties p)
        throws NodeConfig.ConfigException
    {
        final SessionLimits defaults = SessionLimits.DEFAULTS;
        try
        {
            return new SessionLimits(
                NodeConfig.intValue(source, p, SESSIONS_PER_CONNECTION, defaults.perConnection()),
                NodeConfig.intValue(source, p, SESSIONS_PER_PRINCIPAL, defaults.perPrincipal()),
                NodeConfig.intValue(source, p, SESSION_OPENS_PER_SECOND, defaults.opensPerSecondPerConnection()));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + SESSIONS_PER_CONNECTION + ", " +
                SESSIONS_PER_PRINCIPAL + ", " + SESSION_OPENS_PER_SECOND + ": " + ex.getMessage());
        }
    }

    private static ConnectionLimits limits(final String source, final Properties p) throws NodeConfig.ConfigException
    {
        final ConnectionLimits defaults = ConnectionLimits.DEFAULTS;
        final int clients = NodeConfig.intValue(source, p, CLIENT_CONNECTIONS_MAX, defaults.maxClients());
        final int handshakes = NodeConfig.intValue(source, p, CLIENT_HANDSHAKES_MAX, defaults.maxHandshakes());
        final int idleMs = NodeConfig.intValue(source, p, CLIENT_IDLE_TIMEOUT_MS,
            (int)TimeUnit.NANOSECONDS.toMillis(defaults.clientIdleTimeoutNs()));
        if (idleMs < 10_000)
        {
            // Clients and tools write at least every 3 s on every connection (a heartbeat when idle).
            throw new NodeConfig.ConfigException(source + ": " + CLIENT_IDLE_TIMEOUT_MS + " must be at least 10000 " +
                "(clients send a heartbeat every 3 s), not " + idleMs);
        }
        final long bufferBytes;
        try
        {
            bufferBytes = Long.parseLong(p.getProperty(CLIENT_BUFFERS_MAX_BYTES,
                Long.toString(defaults.clientBufferBytes())).trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + CLIENT_BUFFERS_MAX_BYTES + " must be a whole " +
                "number of bytes, not '" + p.getProperty(CLIENT_BUFFERS_MAX_BYTES) + "'");
        }
        try
        {
            return new ConnectionLimits(clients, handshakes, TimeUnit.MILLISECONDS.toNanos(idleMs), bufferBytes);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + CLIENT_CONNECTIONS_MAX + ", " +
                CLIENT_HANDSHAKES_MAX + ", " + CLIENT_IDLE_TIMEOUT_MS + ", " + CLIENT_BUFFERS_MAX_BYTES + ": " +
                ex.getMessage());
        }
    }

    private static ClientAuthenticator instantiate(final String source, final String className)
        throws NodeConfig.ConfigException
    {
        try
        {
            final Object instance = Class.forName(className).getConstructor().newInstance();
            if (!(instance instanceof ClientAuthenticator authenticator))
            {
                throw new NodeConfig.ConfigException(source + ": " + CLIENT_AUTHENTICATOR + "=" + className +
                    " does not implement io.lockstep.cluster.ClientAuthenticator");
            }
            return authenticator;
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + CLIENT_AUTHENTICATOR + "=" + className + " is not " +
                "accept-all, token-file, or a class with a public no-argument constructor on the class path (" + ex +
                ")");
        }
    }
}
