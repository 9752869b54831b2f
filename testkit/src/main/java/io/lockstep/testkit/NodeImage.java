package io.lockstep.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * The member image, built here on first use (no registry): the kit's {@code build-node-image.sh} jlinks the JDK
 * running the tests into a small image, tagged by a hash of that JDK, so later runs reuse it.
 * {@code LOCKSTEP_NODE_IMAGE} names an image to use instead.
 */
final class NodeImage
{
    private static String name;

    private NodeImage()
    {
    }

    static synchronized String name() throws IOException
    {
        if (null != name)
        {
            return name;
        }
        final String given = System.getenv("LOCKSTEP_NODE_IMAGE");
        if (null != given && !given.isBlank())
        {
            return name = given.trim();
        }
        final Path script = Files.createTempFile("build-node-image", ".sh");
        try (InputStream in = NodeImage.class.getResourceAsStream("build-node-image.sh"))
        {
            if (null == in)
            {
                throw new IOException("build-node-image.sh is missing from the test kit's jar");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        final ProcessBuilder builder = new ProcessBuilder("bash", script.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().putIfAbsent("LOCKSTEP_IMAGE_JDK", System.getProperty("java.home"));
        final Process process = builder.start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try
        {
            if (!process.waitFor(120, TimeUnit.SECONDS) || 0 != process.exitValue() || out.isEmpty())
            {
                throw new IOException("building the member image failed (exit " +
                    (process.isAlive() ? "none: timed out" : process.exitValue()) + "): " + out);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while building the member image", ex);
        }
        finally
        {
            Files.deleteIfExists(script);
        }
        final String[] lines = out.split("\n");
        return name = lines[lines.length - 1].trim();
    }
}
