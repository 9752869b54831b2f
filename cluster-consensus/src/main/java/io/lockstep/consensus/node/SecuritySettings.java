package io.lockstep.consensus.node;

import io.lockstep.cluster.ClientAuthenticator;
import io.lockstep.cluster.TokenFileAuthenticator;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.ConnectionLimits;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Who a member lets in: the cluster secret members and operator tools prove at connect, and the authenticator
 * client connects go through.
 * <pre>
 * lockstep.cluster.secret.file   a file holding the cluster secret (at least 16 bytes; the same file on every
 *                                member and for the tool), relative to the config file's directory. Without it,
 *                                any process that reaches a member's port can claim to be a member or run tool
 *                                commands, and the member says so at start-up.
 * lockstep.client.authenticator  accept-all (default), token-file, or a ClientAuthenticator class name
 * lockstep.client.tokens.file    for token-file: principal=SHA-256-hex-of-token lines, relative to the config file
 * lockstep.client.connections.max  client and tool connections open at once (default 256); one more is refused
 * lockstep.client.handshakes.max   connections still in their handshake (default 64); one more evicts the oldest
 * lockstep.client.idle.timeout.ms  a client or tool connection silent this long is closed (default 30000)
 * </pre>
 * Member connections never count against the client bounds (see {@link ConnectionLimits}).
 *
 * @param secret        the cluster secret, or null for none.
 * @param authenticator decides on client connects.
 * @param limits        what connections that are not members may hold.
 * @param warnings      what is open, said at start-up.
 */
public record SecuritySettings(
    ClusterSecret secret, ClientAuthenticator authenticator, ConnectionLimits limits, List<String> warnings)
{
    public static final String SECRET_FILE = "lockstep.cluster.secret.file";
    public static final String CLIENT_AUTHENTICATOR = "lockstep.client.authenticator";
    public static final String TOKENS_FILE = "lockstep.client.tokens.file";
    public static final String CLIENT_CONNECTIONS_MAX = "lockstep.client.connections.max";
    public static final String CLIENT_HANDSHAKES_MAX = "lockstep.client.handshakes.max";
    public static final String CLIENT_IDLE_TIMEOUT_MS = "lockstep.client.idle.timeout.ms";

    /** No secret, every client accepted: for tests and tools that build members in code. */
    public static final SecuritySettings OPEN = new SecuritySettings(null, ClientAuthenticator.ACCEPT_ALL,
        ConnectionLimits.DEFAULTS, List.of());

    static SecuritySettings parse(final String source, final Path configDir, final Properties p)
        throws NodeConfig.ConfigException
    {
        final List<String> warnings = new ArrayList<>();
        ClusterSecret secret = null;
        final String secretFile = p.getProperty(SECRET_FILE, "").trim();
        if (secretFile.isEmpty())
        {
            warnings.add("member authentication is OFF (" + SECRET_FILE + " not set): any process that reaches " +
                "this member's port can claim to be a member or run tool commands");
        }
        else
        {
            try
            {
                secret = ClusterSecret.read(configDir.resolve(secretFile));
            }
            catch (final IOException | IllegalArgumentException ex)
            {
                throw new NodeConfig.ConfigException(source + ": " + SECRET_FILE + ": " + ex.getMessage());
            }
        }
        final String name = p.getProperty(CLIENT_AUTHENTICATOR, "accept-all").trim();
        final ClientAuthenticator authenticator;
        switch (name)
        {
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
        return new SecuritySettings(secret, authenticator, limits(source, p), List.copyOf(warnings));
    }

    private static ConnectionLimits limits(final String source, final Properties p) throws NodeConfig.ConfigException
    {
        final ConnectionLimits defaults = ConnectionLimits.DEFAULTS;
        final int clients = NodeConfig.intValue(source, p, CLIENT_CONNECTIONS_MAX, defaults.maxClients());
        final int handshakes = NodeConfig.intValue(source, p, CLIENT_HANDSHAKES_MAX, defaults.maxHandshakes());
        final int idleMs = NodeConfig.intValue(source, p, CLIENT_IDLE_TIMEOUT_MS,
            (int)TimeUnit.NANOSECONDS.toMillis(defaults.clientIdleTimeoutNs()));
        try
        {
            return new ConnectionLimits(clients, handshakes, TimeUnit.MILLISECONDS.toNanos(idleMs));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new NodeConfig.ConfigException(source + ": " + CLIENT_CONNECTIONS_MAX + ", " +
                CLIENT_HANDSHAKES_MAX + ", " + CLIENT_IDLE_TIMEOUT_MS + ": " + ex.getMessage());
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
