package io.lockstep.consensus.node;

import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.MemberMetrics;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reference pages are held to the code: every key a member reads is in the configuration reference, every
 * metric a member serves is in the metrics reference, and every kind of error it records is in the tool reference. A
 * key, metric or kind added without its line there fails here.
 */
class ReferenceDocsTest
{
    private static final Path DOCS = Path.of("..", "docs", "reference");

    @Test
    void everyKeyAMemberReadsIsInTheConfigurationReference() throws IOException
    {
        final String doc = Files.readString(DOCS.resolve("configuration.md"));
        final List<String> missing = new ArrayList<>();
        final int keys = ConfigKeys.ALL.size();
        for (final String key : ConfigKeys.ALL)
        {
            if (!doc.contains("`" + key + "`"))
            {
                missing.add(key);
            }
        }
        assertTrue(keys >= 40, "keys found in the code: " + keys);
        assertTrue(missing.isEmpty(), "keys missing from docs/reference/configuration.md: " + missing);
    }

    @Test
    void everyMetricAMemberServesIsInTheMetricsReference() throws IOException
    {
        final String doc = Files.readString(DOCS.resolve("metrics.md"));
        final List<String> missing = new ArrayList<>();
        int metrics = 0;
        for (final String line : MetricsServer.render(0, new MemberMetrics()).split("\n"))
        {
            if (line.startsWith("# TYPE "))
            {
                metrics++;
                final String name = line.split(" ")[2];
                if (!doc.contains("`" + name + "`"))
                {
                    missing.add(name);
                }
            }
        }
        assertTrue(metrics >= 30, "metrics served: " + metrics);
        assertTrue(missing.isEmpty(), "metrics missing from docs/reference/metrics.md: " + missing);
    }

    @Test
    void everyKindOfErrorAMemberRecordsIsInTheToolReference() throws IOException
    {
        final String doc = Files.readString(DOCS.resolve("tool.md"));
        final List<String> missing = new ArrayList<>();
        for (final String kind : MemberErrors.KINDS)
        {
            assertTrue(kind.matches("[a-z]+(-[a-z]+)*"), "a kind is a word or words joined by hyphens: " + kind);
            if (!doc.contains("| `" + kind + "` |"))
            {
                missing.add(kind);
            }
        }
        assertTrue(MemberErrors.KINDS.size() >= 19, "kinds: " + MemberErrors.KINDS.size());
        assertTrue(missing.isEmpty(), "error kinds missing from docs/reference/tool.md: " + missing);
    }
}
