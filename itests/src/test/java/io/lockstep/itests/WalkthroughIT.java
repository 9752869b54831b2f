package io.lockstep.itests;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The walk-through "Running a cluster by hand" in docs/reference/tool.md, run as written: the first code block's
 * commands start the three members (each in the background, as in three terminals), the second block's run one after
 * another from the repository's root, and each must exit 0. Changing a command's name, its options or what the shipped
 * configuration runs, without the doc following, fails here.
 */
class WalkthroughIT
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path DOC = ROOT.resolve("docs/reference/tool.md");
    private static final long COMMAND_TIMEOUT_S = 120;

    private final List<Process> members = new ArrayList<>();
    /** The data directories are this test's own (none was there before it): removed after it. */
    private boolean ownsBuildData;

    @AfterEach
    void stopMembers() throws Exception
    {
        for (final Process member : members)
        {
            member.destroyForcibly();
            member.waitFor(10, TimeUnit.SECONDS);
        }
        if (ownsBuildData)
        {
            deleteBuildData();
        }
    }

    @Test
    void theByHandWalkThroughRunsAsWritten() throws Exception
    {
        final List<List<String>> blocks = codeBlocksOfSection(Files.readAllLines(DOC), "## Running a cluster by hand");
        assertTrue(blocks.size() >= 2, "two code blocks in the walk-through: " + blocks);
        final List<String> nodes = blocks.get(0);
        final List<String> tools = blocks.get(1);
        assertEquals(3, nodes.size(), "three member commands: " + nodes);
        assertTrue(!Files.exists(ROOT.resolve("build-data")), ROOT.resolve("build-data") + " exists: a cluster " +
            "started by hand may be running from it. Stop it and remove the directory, then run this test again");
        ownsBuildData = true;
        deleteBuildData();

        for (final String node : nodes)
        {
            final ProcessBuilder member = new ProcessBuilder("bash", "-c", node).directory(ROOT.toFile())
                .redirectErrorStream(true).redirectOutput(ROOT.resolve("itests/target")
                .resolve("walkthrough-" + members.size() + ".log").toFile());
            // The jars are built: a launcher building them again would race this Maven build.
            member.environment().put("LOCKSTEP_NO_BUILD", "1");
            members.add(member.start());
        }
        // The first tool command (status) waits for nothing: retry it until a leader is elected, within a bound.
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Result status;
        do
        {
            status = run(tools.get(0));
            assertTrue(System.nanoTime() < deadline, "a leader within 90 s of starting the members:\n" +
                status.output);
        }
        while (!status.output.contains("role=leader"));

        for (final String command : tools.subList(1, tools.size()))
        {
            final Result result = run(command);
            assertEquals(0, result.exitCode, command + "\n" + result.output);
        }
        for (final Process member : members)
        {
            // The walk-through ends with tool shutdown: every member stops by itself, exit 0.
            assertTrue(member.waitFor(30, TimeUnit.SECONDS), "a member still runs after tool shutdown");
            assertEquals(0, member.exitValue(), "a member's exit code after tool shutdown");
        }
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result run(final String command) throws Exception
    {
        final ProcessBuilder builder = new ProcessBuilder("bash", "-c", command).directory(ROOT.toFile())
            .redirectErrorStream(true);
        builder.environment().put("LOCKSTEP_NO_BUILD", "1");
        final Process process = builder.start();
        final byte[][] output = new byte[1][];
        final Thread pump = new Thread(() ->
        {
            try
            {
                output[0] = process.getInputStream().readAllBytes();
            }
            catch (final IOException ex)
            {
                output[0] = ex.toString().getBytes(StandardCharsets.UTF_8);
            }
        });
        pump.start();
        if (!process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError(command + " did not finish within " + COMMAND_TIMEOUT_S + " s");
        }
        pump.join(TimeUnit.SECONDS.toMillis(10));
        return new Result(process.exitValue(), null == output[0] ? "" : new String(output[0], StandardCharsets.UTF_8));
    }

    /** The command lines of each code block under the heading, up to the next heading; comments and blanks dropped. */
    private static List<List<String>> codeBlocksOfSection(final List<String> lines, final String heading)
    {
        final List<List<String>> blocks = new ArrayList<>();
        int i = lines.indexOf(heading);
        assertTrue(i >= 0, "the doc has the section " + heading);
        List<String> block = null;
        for (i++; i < lines.size() && !lines.get(i).startsWith("## "); i++)
        {
            final String line = lines.get(i);
            if (line.startsWith("```"))
            {
                if (null == block)
                {
                    block = new ArrayList<>();
                }
                else
                {
                    blocks.add(block);
                    block = null;
                }
            }
            else if (null != block)
            {
                final int comment = line.indexOf(" #");
                final String command = (comment >= 0 ? line.substring(0, comment) : line).trim();
                if (!command.isEmpty())
                {
                    block.add(command);
                }
            }
        }
        return blocks;
    }

    private static void deleteBuildData() throws IOException
    {
        final Path data = ROOT.resolve("build-data");
        if (Files.exists(data))
        {
            try (Stream<Path> paths = Files.walk(data))
            {
                for (final Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList())
                {
                    Files.delete(p);
                }
            }
        }
        final Path backup = Path.of("/tmp/lockstep-backup");
        if (Files.exists(backup))
        {
            try (Stream<Path> paths = Files.walk(backup))
            {
                for (final Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList())
                {
                    Files.delete(p);
                }
            }
        }
    }
}
