package io.lockstep.consensus.node;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemorySettingsTest
{
    @Test
    void aSizeSplitsThreeQuartersHeapAndAQuarterDirect()
    {
        assertEquals(2L << 30, MemorySettings.parse(" 2G "));
        assertEquals(List.of("-Xms1536m", "-Xmx1536m", "-XX:MaxDirectMemorySize=512m"),
            MemorySettings.jvmOptions(MemorySettings.parse("2g")));
        assertEquals(List.of("-Xms240m", "-Xmx240m", "-XX:MaxDirectMemorySize=80m"),
            MemorySettings.jvmOptions(MemorySettings.parse("320m")));
    }

    @Test
    void aValueThatIsNotASizeOrTooSmallIsNamed()
    {
        for (final String bad : List.of("lots", "1.5g", "-1g", "64m", "99999999999999g"))
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> MemorySettings.parse(bad));
            assertTrue(ex.getMessage().startsWith("lockstep.memory"), ex.getMessage());
            assertTrue(ex.getMessage().contains(bad), ex.getMessage());
        }
    }

    @Test
    void sessionsWithFullEgressBuffersFitInHalfTheHeap()
    {
        final int egress = 256 * 1024;
        assertEquals(478, MemorySettings.sessionLimit(240L << 20, 4096, egress), "a test member's 240 MiB heap");
        assertEquals(4096, MemorySettings.sessionLimit(8L << 30, 4096, egress), "never beyond the table");
        assertEquals(1, MemorySettings.sessionLimit(1L << 20, 4096, egress), "at least one");
    }

    @Test
    void aConfigurationWithABadValueIsRefusedNamingIt() throws Exception
    {
        final Properties p = new Properties();
        p.setProperty(NodeConfig.MEMBER_ID, "0");
        p.setProperty(NodeConfig.MEMBERS, "0=127.0.0.1:9101");
        p.setProperty(NodeConfig.DATA_DIR, "/tmp/unused");
        p.setProperty(MemorySettings.MEMORY, "huge");
        final NodeConfig.ConfigException ex = assertThrows(NodeConfig.ConfigException.class,
            () -> NodeConfig.parse("test.properties", p));
        assertTrue(ex.getMessage().contains("lockstep.memory must be a size"), ex.getMessage());
    }
}
