package io.lockstep.itests;

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
 * The tutorial as a new user follows it: every block the doc marks {@code <!-- file: PATH -->} is written to that
 * path of an empty directory, and the doc's command, {@code mvn test}, runs there against the Lockstep this build
 * installed. The tutorial's simulation test and failover test must both pass, so the doc cannot drift from what works.
 */
class TutorialIT
{
    private static final Path TUTORIAL = Path.of("..", "docs", "tutorial", "first-service.md");
    private static final String FILE_MARKER = "<!-- file: ";

    @TempDir
    Path project;

    @Test
    void theTutorialsProjectBuildsAndItsTestsPassAsWritten() throws Exception
    {
        final List<String> lines = Files.readAllLines(TUTORIAL);
        final List<String> written = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++)
        {
            if (!lines.get(i).startsWith(FILE_MARKER))
            {
                continue;
            }
            final String path = lines.get(i).substring(FILE_MARKER.length(), lines.get(i).indexOf(" -->")).trim();
            assertTrue(lines.get(i + 1).startsWith("```"), "a code block after the file line for " + path);
            final StringBuilder content = new StringBuilder();
            int j = i + 2;
            for (; !"```".equals(lines.get(j)); j++)
            {
                content.append(lines.get(j)).append('\n');
            }
            final Path file = project.resolve(path);
            Files.createDirectories(file.getParent() == null ? project : file.getParent());
            Files.writeString(file, content, StandardCharsets.UTF_8);
            written.add(path);
            i = j;
        }
        assertTrue(written.contains("pom.xml") && written.size() >= 4, "files in the tutorial: " + written);

        // As the tutorial says: Lockstep from the local repository this build installed it into (step 0), everything
        // else from Maven Central. Not offline: the system's Maven asks for plugin dependencies of its own (Maven
        // 3.8 adds plexus-utils 1.1 to older plugins) that the build's wrapper never fetched, so on a machine whose
        // local repository is new an offline run fails before any test.
        final Process mvn = new ProcessBuilder("mvn", "-B", "test")
            .directory(project.toFile()).redirectErrorStream(true).start();
        final StringBuilder output = new StringBuilder();
        final Thread pump = new Thread(() ->
        {
            try
            {
                output.append(new String(mvn.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
            catch (final IOException ex)
            {
                output.append(ex);
            }
        });
        pump.start();
        final boolean exited = mvn.waitFor(5, TimeUnit.MINUTES);
        if (!exited)
        {
            mvn.destroyForcibly();
        }
        pump.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(exited, "mvn test ran within 5 minutes:\n" + output);
        assertEquals(0, mvn.exitValue(), output.toString());
        assertTrue(output.toString().contains("Tests run: 2, Failures: 0, Errors: 0, Skipped: 0"), output.toString());
    }
}
