package io.lockstep.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RolloverWarmUpTest
{
    @TempDir
    Path dir;

    /**
     * In a fresh JVM (this one has mapped and queued plenty already), rollovers after open must not be where the JDK
     * generates its reflective accessor for mapped buffers (on JDK 17 a 5-9 ms stall of a leader's thread at its
     * 16th mapping: {@link MappingWarmUp}) or links the background sync queue's method handles (about 6 ms of every
     * member's thread at the first rollover: {@link BackgroundSync}). Either shows as classes of
     * {@code jdk.internal.reflect} or {@code java.lang.invoke} loaded after open.
     */
    @Test
    void rolloversAfterOpenLoadNoReflectionOrMethodHandleClasses() throws Exception
    {
        final List<String> loaded = classesLoadedByRollovers(false);
        assertEquals(List.of(), loaded.stream()
                .filter(line -> line.contains("jdk.internal.reflect.") || line.contains("java.lang.invoke."))
                .collect(Collectors.toList()),
            "reflection or method handle classes loaded by rollovers after open");
    }

    /**
     * After {@link RolloverRehearsal}, as a member starts, a log's rollovers load nothing at all.
     */
    @Test
    void rolloversAfterARehearsalLoadNoClass() throws Exception
    {
        assertEquals(List.of(), classesLoadedByRollovers(true), "classes loaded by rollovers after the rehearsal");
    }

    private List<String> classesLoadedByRollovers(final boolean rehearse) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process process = new ProcessBuilder(List.of(java, "-verbose:class",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), RolloverProbe.class.getName(), dir.toString(),
            rehearse ? "rehearse" : "no-rehearsal"))
            .redirectErrorStream(true).start();
        final List<String> loadedAfterOpen = new ArrayList<>();
        final StringBuilder other = new StringBuilder();
        String done = null;
        boolean opened = false;
        try (BufferedReader out = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (null != (line = out.readLine()))
            {
                if (line.equals("opened"))
                {
                    opened = true;
                }
                else if (line.startsWith("done "))
                {
                    done = line;
                }
                else if (opened && null == done && line.contains("[class,load]"))
                {
                    loadedAfterOpen.add(line);
                }
                else if (!line.contains("[class,load]") && other.length() < 10_000)
                {
                    other.append(line).append('\n');
                }
            }
        }
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "probe did not exit");
        assertEquals(0, process.exitValue(), "probe failed: " + other);
        assertTrue(opened && null != done, "probe did not run its rollovers: " + other);
        assertTrue(Long.parseLong(done.substring(5)) > RolloverProbe.SEGMENTS * 4L, done);
        return loadedAfterOpen;
    }
}
