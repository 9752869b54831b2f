package io.lockstep.cluster;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A JVM without Agrona's option gets one error naming the option to add; a JVM with it (this one) passes.
 */
class JvmOptionsTest
{
    @Test
    void aJvmWithoutTheExportIsToldWhichOptionToAdd() throws Exception
    {
        JvmOptions.check();

        final Outcome without = probe(List.of());
        assertEquals(1, without.exitCode, without.output);
        assertTrue(without.output.contains("this JVM runs without --add-exports java.base/jdk.internal.misc=" +
            "ALL-UNNAMED"), without.output);

        final Outcome with = probe(List.of("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"));
        assertEquals(0, with.exitCode, with.output);
    }

    private record Outcome(int exitCode, String output)
    {
    }

    private static Outcome probe(final List<String> options) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Probe.class.getName()));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the probe JVM exited");
        return new Outcome(process.exitValue(), output);
    }

    /** Runs the check in a JVM of its own: exit 0 if it passes, 1 with the message if not. */
    public static final class Probe
    {
        public static void main(final String[] args)
        {
            try
            {
                JvmOptions.check();
            }
            catch (final IllegalStateException ex)
            {
                System.out.println(ex.getMessage());
                System.exit(1);
            }
        }
    }
}
