package io.lockstep.cluster.transport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for a development or test cluster: a new certificate authority, and one certificate (with its key)
 * naming every host given, which every member of that cluster can share (clients and tools need only the
 * authority's certificate). Made with the JDK's own
 * {@code keytool}, so that nothing needs installing; the authority's key is thrown away, so nothing more can be
 * signed with it. Production clusters take their certificates from their own authority: see docs/security.md.
 * <p>
 * Writes, into the directory: {@code ca.pem} (the authority: every side's {@code lockstep.tls.trust.file}),
 * {@code member.pem} (the certificate chain: {@code lockstep.tls.certificate.file}) and {@code member.key} (its
 * private key, PKCS#8, mode 600: {@code lockstep.tls.key.file}).
 */
public final class DevCertificates
{
    public static final String AUTHORITY = "ca.pem";
    public static final String CERTIFICATE = "member.pem";
    public static final String KEY = "member.key";
    private static final long KEYTOOL_TIMEOUT_S = 60;

    private DevCertificates()
    {
    }

    /**
     * {@code DevCertificates DIR HOST...}: for the launcher's {@code bin/lockstep tls-files}.
     */
    public static void main(final String[] args) throws IOException
    {
        if (args.length < 2)
        {
            System.err.println("usage: DevCertificates DIR HOST... (host names or IP addresses the members are " +
                "configured at)");
            System.exit(2);
        }
        final Path dir = Path.of(args[0]);
        final List<String> hosts = List.of(args).subList(1, args.length);
        try
        {
            write(dir, hosts);
        }
        catch (final IOException ex)
        {
            System.err.println("lockstep tls-files: " + ex.getMessage());
            System.exit(2);
        }
        System.out.println("wrote " + dir.resolve(AUTHORITY) + " (lockstep.tls.trust.file), " +
            dir.resolve(CERTIFICATE) + " (lockstep.tls.certificate.file) and " + dir.resolve(KEY) +
            " (lockstep.tls.key.file, mode 600), naming " + String.join(", ", hosts));
    }

    /**
     * @param dir   where the three files go (created if missing); none of them may exist yet.
     * @param hosts every host name and IP address a member is configured at, or dialled by.
     * @throws IOException naming the keytool step that failed.
     */
    public static void write(final Path dir, final List<String> hosts) throws IOException
    {
        if (hosts.isEmpty())
        {
            throw new IllegalArgumentException("a certificate needs at least one host name or IP address");
        }
        for (final String name : new String[]{ AUTHORITY, CERTIFICATE, KEY })
        {
            if (Files.exists(dir.resolve(name)))
            {
                // Each run makes a new authority: over files in use, it would cut every peer off at the next reload.
                throw new IOException(dir.resolve(name) + " exists: each run makes a new authority, which every " +
                    "member, client and tool would have to trust anew; not overwriting (remove the files, or use " +
                    "another directory)");
            }
        }
        Files.createDirectories(dir);
        final Path work = Files.createTempDirectory(dir, ".keytool");
        final String password = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        try
        {
            final Path ca = work.resolve("ca.p12");
            final Path member = work.resolve("member.p12");
            final Path request = work.resolve("member.csr");
            final Path signed = work.resolve("member.crt");
            final Path authority = work.resolve("ca.pem");
            keytool(password, "-genkeypair", "-keystore", ca.toString(), "-alias", "ca", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=Lockstep development authority", "-ext", "bc:c",
                "-validity", "3650");
            keytool(password, "-exportcert", "-keystore", ca.toString(), "-alias", "ca", "-rfc", "-file",
                authority.toString());
            keytool(password, "-genkeypair", "-keystore", member.toString(), "-alias", "member", "-keyalg", "EC",
                "-groupname", "secp256r1", "-dname", "CN=Lockstep member", "-validity", "825");
            keytool(password, "-certreq", "-keystore", member.toString(), "-alias", "member", "-file",
                request.toString());
            keytool(password, "-gencert", "-keystore", ca.toString(), "-alias", "ca", "-infile", request.toString(),
                "-outfile", signed.toString(), "-rfc", "-validity", "825", "-ext", "SAN=" + names(hosts),
                "-ext", "KeyUsage=digitalSignature", "-ext", "ExtendedKeyUsage=serverAuth,clientAuth");

            final Path keyFile = dir.resolve(KEY);
            Files.deleteIfExists(keyFile);
            Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                "rw-------")));
            Files.writeString(keyFile, pem("PRIVATE KEY", privateKey(member, password)), StandardCharsets.US_ASCII);
            Files.writeString(dir.resolve(CERTIFICATE), Files.readString(signed) + Files.readString(authority));
            Files.copy(authority, dir.resolve(AUTHORITY), StandardCopyOption.REPLACE_EXISTING);
        }
        finally
        {
            try (var files = Files.list(work))
            {
                for (final Path file : files.toList())
                {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(work);
        }
    }

    private static String names(final List<String> hosts)
    {
        final List<String> names = new ArrayList<>();
        for (final String host : hosts)
        {
            final boolean address = host.indexOf(':') >= 0 || host.chars().allMatch(c -> Character.isDigit(c) ||
                '.' == c);
            names.add((address ? "ip:" : "dns:") + host);
        }
        return String.join(",", names);
    }

    private static byte[] privateKey(final Path keystore, final String password) throws IOException
    {
        try (InputStream in = Files.newInputStream(keystore))
        {
            final KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password.toCharArray());
            final Key key = store.getKey("member", password.toCharArray());
            return key.getEncoded();
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IOException("cannot read the key keytool made: " + ex.getMessage(), ex);
        }
    }

    private static String pem(final String type, final byte[] der)
    {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[]{ '\n' }).encodeToString(der) +
            "\n-----END " + type + "-----\n";
    }

    private static void keytool(final String password, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", password, "-noprompt"));
        // Output to a file, not a pipe: reading a pipe to its end would wait as long as keytool, past the timeout.
        final Path output = Files.createTempFile("keytool", ".out");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(output.toFile()).start();
        try
        {
            final boolean done = process.waitFor(KEYTOOL_TIMEOUT_S, TimeUnit.SECONDS);
            if (!done || 0 != process.exitValue())
            {
                process.destroyForcibly();
                throw new IOException("keytool " + args[0] + (done ? " failed: " : " did not finish in " +
                    KEYTOOL_TIMEOUT_S + " s: ") + Files.readString(output, StandardCharsets.UTF_8).trim());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool " + args[0] + " ran", ex);
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }
}
