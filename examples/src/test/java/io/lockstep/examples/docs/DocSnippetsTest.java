package io.lockstep.examples.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The code the README and the docs show is the code CI compiles and tests: each code block that follows a
 * {@code <!-- snippet: PATH -->} line must appear in that file, line for line (indentation aside), and every Java
 * block in the docs must carry such a line, or a {@code <!-- file: PATH -->} line: a whole file of the tutorial's
 * project, which {@code TutorialIT} builds and tests as written. A change to the example that the docs do not
 * follow fails here.
 */
class DocSnippetsTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String MARKER = "<!-- snippet: ";
    private static final String FILE_MARKER = "<!-- file: ";

    @Test
    void everyJavaSnippetInTheDocsIsInTheFileItNames() throws IOException
    {
        final List<String> problems = new ArrayList<>();
        int checked = 0;
        for (final Path doc : documents())
        {
            final List<String> lines = Files.readAllLines(doc);
            for (int i = 0; i < lines.size(); i++)
            {
                if (!lines.get(i).startsWith("```") || "```".equals(lines.get(i).trim()))
                {
                    continue;
                }
                final boolean java = lines.get(i).startsWith("```java");
                final String marker = i > 0 && lines.get(i - 1).startsWith(MARKER) ? lines.get(i - 1) : null;
                final int end = closing(lines, i);
                if (i > 0 && lines.get(i - 1).startsWith(FILE_MARKER))
                {
                    i = end;
                    continue;
                }
                if (null == marker)
                {
                    if (java)
                    {
                        problems.add(ROOT.relativize(doc) + ":" + (i + 1) + ": a Java block without a snippet line");
                    }
                    i = end;
                    continue;
                }
                final Path source = ROOT.resolve(marker.substring(MARKER.length(), marker.indexOf(" -->")).trim());
                if (!Files.isRegularFile(source))
                {
                    problems.add(ROOT.relativize(doc) + ":" + (i + 1) + ": " + source + " does not exist");
                }
                else if (!contains(Files.readAllLines(source), lines.subList(i + 1, end)))
                {
                    problems.add(ROOT.relativize(doc) + ":" + (i + 1) + ": the block is not in " +
                        ROOT.relativize(source) + " as written");
                }
                checked++;
                i = end;
            }
        }
        if (!problems.isEmpty())
        {
            fail(String.join("\n", problems));
        }
        assertTrue(checked >= 3, "snippets checked: " + checked);
    }

    private static List<Path> documents() throws IOException
    {
        final List<Path> documents = new ArrayList<>();
        documents.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs")))
        {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        return documents;
    }

    private static int closing(final List<String> lines, final int opening)
    {
        for (int i = opening + 1; i < lines.size(); i++)
        {
            if ("```".equals(lines.get(i).trim()))
            {
                return i;
            }
        }
        throw new AssertionError("a code block opened at line " + (opening + 1) + " is never closed");
    }

    /** @return true if the block's lines, trimmed, appear in order and together among the source's, trimmed. */
    private static boolean contains(final List<String> source, final List<String> block)
    {
        final List<String> wanted = block.stream().map(String::strip).toList();
        final List<String> have = source.stream().map(String::strip).toList();
        for (int start = 0; start + wanted.size() <= have.size(); start++)
        {
            if (have.subList(start, start + wanted.size()).equals(wanted))
            {
                return true;
            }
        }
        return false;
    }
}
