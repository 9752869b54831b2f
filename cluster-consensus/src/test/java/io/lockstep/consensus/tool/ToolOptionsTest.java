package io.lockstep.consensus.tool;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A command line the tool cannot read is refused before anything is asked of the cluster: a mistyped option that was
 * ignored would change what the command does ({@code append --cuont 3} appended one entry and exited 0).
 */
class ToolOptionsTest
{
    @Test
    void everyDocumentedFormIsRead()
    {
        for (final String[] args : new String[][] {
            { "status", "--config", "f" }, { "errors", "--config", "f" },
            { "append", "--config", "f", "--count", "3", "--size", "288" },
            { "step-down", "--config", "f", "--to", "2" },
            { "snapshot", "--config", "f", "--timeout-ms", "5000" }, { "shutdown", "--config", "f" },
            { "add-member", "--config", "f", "--id", "3" },
            { "backup", "--config", "f", "--dir", "d", "--member", "1" },
            { "promote", "--config", "f", "--force" }, { "promote", "--config", "f", "--force", "--timeout-ms", "9" } })
        {
            assertNull(ClusterTool.misreadOptions(args), String.join(" ", args));
        }
    }

    @Test
    void aMistypedOptionAStrayWordOrAMissingValueIsRefusedWithUsageExit()
    {
        assertEquals("append does not take '--cuont'; its options: --count, --size",
            ClusterTool.misreadOptions(new String[] { "append", "--config", "f", "--cuont", "3" }));
        assertEquals("status does not take '--bogus': it has no options",
            ClusterTool.misreadOptions(new String[] { "status", "--config", "f", "--bogus" }));
        assertEquals("append does not take 'extra'; its options: --count, --size",
            ClusterTool.misreadOptions(new String[] { "append", "--config", "f", "--count", "3", "extra" }));
        assertEquals("--to needs a value",
            ClusterTool.misreadOptions(new String[] { "step-down", "--config", "f", "--to" }));
        assertEquals("unknown command 'stauts'",
            ClusterTool.misreadOptions(new String[] { "stauts", "--config", "f" }));

        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int exit = ClusterTool.run(new String[] { "errors", "--config", "no-such-file", "--member", "1" },
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, exit);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("errors does not take '--member'"), err.toString());
    }
}
