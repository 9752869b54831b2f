package io.lockstep.examples.docs;

import io.lockstep.cluster.JvmOptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM options are defined once, in {@link JvmOptions}; the launchers and the build cannot read a Java constant,
 * so they repeat it, and this holds every copy to it.
 */
class JvmOptionsAgreeTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theBuildGivesTestJvmsAMembersOptions() throws IOException
    {
        final Matcher m = Pattern.compile("<lockstep.jvm.args>([^<]*)</lockstep.jvm.args>")
            .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertTrue(m.find(), "pom.xml defines lockstep.jvm.args");
        assertEquals(JvmOptions.member(), List.of(m.group(1).trim().split("\\s+")), "pom.xml's lockstep.jvm.args");
    }

    @Test
    void bothLaunchersStartEveryJvmWithTheRequiredOptionsAndMembersWithTheJitSetting() throws IOException
    {
        for (final Path launcher : List.of(ROOT.resolve("bin/lockstep"), ROOT.resolve("dist/lockstep")))
        {
            final String script = Files.readString(launcher);
            assertEquals(JvmOptions.REQUIRED, shellArray(script, "JVM_ARGS"), launcher + "'s JVM_ARGS");
            assertTrue(script.contains(JvmOptions.MEMBER_JIT), launcher + " gives members " + JvmOptions.MEMBER_JIT);
        }
    }

    private static List<String> shellArray(final String script, final String name)
    {
        final Matcher m = Pattern.compile("(?m)^" + name + "=\\(([^)]*)\\)").matcher(script);
        assertTrue(m.find(), name + " is defined");
        return Arrays.asList(m.group(1).trim().split("\\s+"));
    }
}
