package io.lockstep.examples.docs;

import io.lockstep.consensus.node.MemorySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lockstep.memory} becomes JVM options in three places: {@link MemorySettings#jvmOptions} (the test
 * harnesses' members) and the two launchers' {@code memory_options}, which must start the JVM before any Java runs.
 * This runs the launchers' function and holds it to the Java one.
 */
class MemoryOptionsAgreeTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void bothLaunchersTurnTheSettingIntoTheSameOptionsAsTheMembersCode() throws Exception
    {
        for (final Path launcher : List.of(ROOT.resolve("bin/lockstep"), ROOT.resolve("dist/lockstep")))
        {
            for (final String value : List.of("512m", "2g", "1536M", "300000k", "268435456", "0512m"))
            {
                final Path config = dir.resolve("member.properties");
                Files.writeString(config, "lockstep.member.id=0\n  lockstep.memory = " + value + "\n");
                assertEquals(String.join(" ", MemorySettings.jvmOptions(MemorySettings.parse(value))),
                    memoryOptions(launcher, "--config", config.toString()), launcher + " for " + value);
                assertEquals(String.join(" ", MemorySettings.jvmOptions(MemorySettings.parse(value))),
                    memoryOptions(launcher, "-Dlockstep.memory=" + value), launcher + " for -D " + value);
            }
            assertEquals("", memoryOptions(launcher, "-Dlockstep.memory=lots"),
                "not a size: no options, and the member names the value");
            assertEquals("", memoryOptions(launcher), "unset: the JVM's defaults");
        }
    }

    private static String memoryOptions(final Path launcher, final String... args)
        throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("bash", "-c",
            "set -euo pipefail; source <(sed -n '/^memory_options()/,/^}/p' \"$0\"); memory_options \"$@\"",
            launcher.toString()));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "bash answered");
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, process.exitValue(), out);
        return out;
    }
}
