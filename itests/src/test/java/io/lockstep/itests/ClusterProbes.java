package io.lockstep.itests;

import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.tool.AdminClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the process tests ask of a running cluster, in one place.
 */
final class ClusterProbes
{
    private ClusterProbes()
    {
    }

    /** @return the member that says it leads, or -1 if none answers so within 300 ms. */
    static int leader(final AdminClient admin)
    {
        for (final AdminClient.Status s : admin.status(300).values())
        {
            if (Role.LEADER == s.role())
            {
                return s.memberId();
            }
        }
        return -1;
    }

    /** @return the condition, asked at most every 250 ms, so that a load's loop keeps its rate meanwhile. */
    static BooleanSupplier gated(final BooleanSupplier condition)
    {
        final long[] nextNs = { 0 };
        return () ->
        {
            final long now = System.nanoTime();
            if (now < nextNs[0])
            {
                return false;
            }
            nextNs[0] = now + TimeUnit.MILLISECONDS.toNanos(250);
            return condition.getAsBoolean();
        };
    }

    /** @return the one segment file of a log directory (a test log small enough to fit one). */
    static Path onlySegment(final Path logDir) throws Exception
    {
        try (Stream<Path> files = Files.list(logDir))
        {
            final List<Path> segments = files.filter(f -> f.getFileName().toString().endsWith(".seg")).toList();
            assertEquals(1, segments.size(), segments.toString());
            return segments.get(0);
        }
    }
}
