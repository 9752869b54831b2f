package io.lockstep.consensus.node;

import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.transport.ConnectionLimits;
import io.lockstep.cluster.transport.DevCertificates;
import io.lockstep.cluster.transport.LinkClass;
import io.lockstep.consensus.TimeoutProfile;
import io.lockstep.consensus.service.SessionLimits;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeConfigTest
{
    private static final String GOOD = """
        lockstep.member.id=1
        lockstep.members=0=127.0.0.1:9101,1=127.0.0.1:9102,2=127.0.0.1:9103,3=10.0.0.9:9104/nonvoting
        lockstep.data.dir=data/node1
        """;

    @TempDir
    Path dir;

    @Test
    void aGoodFileLoadsWithDefaults() throws Exception
    {
        final NodeConfig config = NodeConfig.load(write(GOOD), new Properties());
        assertEquals(1, config.memberId());
        assertEquals(4, config.members().size());
        assertFalse(config.members().get(3).voting());
        assertEquals(TimeoutProfile.LAN, config.timeouts());
        assertEquals(DurabilityPolicy.BATCH, config.durability());
        assertEquals(Path.of("data/node1"), config.dataDir());
        assertEquals(0, config.metricsPort(), "metrics are off unless asked for");
        assertEquals(IdleSettings.DEFAULT, config.idle());
        assertEquals(1000, config.purgeDelayMs());
    }

    @Test
    void thePurgeDelayIsSetByKeyAndBounded() throws Exception
    {
        assertEquals(0, NodeConfig.load(write(GOOD + "lockstep.log.purge.delay.ms=0\n"), new Properties())
            .purgeDelayMs());
        assertError("lockstep.log.purge.delay.ms must be in [0, 60000], not -5", GOOD
            + "lockstep.log.purge.delay.ms=-5\n");
        assertError("lockstep.log.purge.delay.ms must be in [0, 60000], not 600000",
            GOOD + "lockstep.log.purge.delay.ms=600000\n");
    }

    @Test
    void theIdleStrategyIsChosenByKeyAndItsMistakesAreNamed() throws Exception
    {
        final Properties overrides = new Properties();
        overrides.setProperty("lockstep.idle.spins", "0");
        assertEquals(new IdleSettings("selector", 0, 1, 0), NodeConfig.load(write(GOOD), overrides).idle());
        assertEquals("spin", NodeConfig.load(write(GOOD + "lockstep.idle=SPIN\n"), new Properties()).idle().strategy());
        assertEquals(BusySpinIdleStrategy.class, NodeConfig.load(write(GOOD +
            "lockstep.idle=spin\n"), new Properties()).idle().newIdleStrategy(null).getClass());
        assertEquals(YieldingIdleStrategy.class, NodeConfig.load(write(GOOD +
            "lockstep.idle=yield\n"), new Properties()).idle().newIdleStrategy(null).getClass());
        assertError("lockstep.idle must be selector, yield or spin, not 'park'", GOOD + "lockstep.idle=park\n");
        assertError("lockstep.idle.yields must be a whole number in [0, 1000000], not '-1'",
            GOOD + "lockstep.idle.yields=-1\n");
        assertEquals(19, NodeConfig.load(write(GOOD + "lockstep.background.nice=19\n"), new Properties()).idle()
            .backgroundNice());
        assertError("lockstep.background.nice must be a whole number in [0, 19], not '20'",
            GOOD + "lockstep.background.nice=20\n");
    }

    @Test
    void theThreadingModeIsChosenByKeyAndItsMistakesAreNamed() throws Exception
    {
        assertEquals(ThreadingSettings.DEFAULT, NodeConfig.load(write(GOOD), new Properties()).threading());
        final String service = GOOD + "lockstep.service=io.lockstep.Example\n";
        assertEquals(new ThreadingSettings(true, "spin"), NodeConfig.load(write(service +
            "lockstep.threading=DEDICATED\nlockstep.service.idle=spin\n"), new Properties()).threading());
        assertError("lockstep.threading must be shared or dedicated, not 'both'", service
            + "lockstep.threading=both\n");
        assertError("lockstep.service.idle must be park, yield or spin, not 'sleep'", service +
            "lockstep.threading=dedicated\nlockstep.service.idle=sleep\n");
        assertError("lockstep.threading=dedicated needs a service (lockstep.service)", GOOD +
            "lockstep.threading=dedicated\n");
    }

    @Test
    void systemPropertiesOverrideTheFile() throws Exception
    {
        final Properties overrides = new Properties();
        overrides.setProperty("lockstep.durability", "none");
        overrides.setProperty("lockstep.timeouts", "wan");
        final NodeConfig config = NodeConfig.load(write(GOOD), overrides);
        assertEquals(DurabilityPolicy.NONE, config.durability());
        assertEquals(TimeoutProfile.WAN, config.timeouts());
    }

    @Test
    void everyMistakeIsNamed() throws Exception
    {
        assertError("missing required key lockstep.member.id", GOOD.replace("lockstep.member.id=1\n", ""));
        assertError("lockstep.member.id must be a whole number", GOOD.replace("id=1", "id=one"));
        assertError("lockstep.member.id=7 is not in lockstep.members", GOOD.replace("id=1", "id=7"));
        assertError("entry '2=127.0.0.1' has no host:port", GOOD.replace("2=127.0.0.1:9103", "2=127.0.0.1"));
        assertError("has port out of range", GOOD.replace(":9103", ":99999"));
        assertError("member id listed twice", GOOD.replace("2=127", "1=127"));
        assertError("lockstep.timeouts must be lan or wan, not 'fast'", GOOD + "lockstep.timeouts=fast\n");
        assertError("lockstep.durability must be batch or none", GOOD + "lockstep.durability=always\n");
        assertError("segmentLength must be a power of two", GOOD + "lockstep.log.segment.length=1000000\n");
        assertError("missing required key lockstep.data.dir", GOOD.replace("lockstep.data.dir=data/node1\n", ""));
        assertError("lockstep.metrics.port must be a port in [1, 65535], or 0 for off, not 70000",
            GOOD + "lockstep.metrics.port=70000\n");

        final NodeConfig.ConfigException missing = assertThrows(NodeConfig.ConfigException.class,
            () -> NodeConfig.load(dir.resolve("nope.properties"), new Properties()));
        assertTrue(missing.getMessage().contains("config file not found"), missing.getMessage());
    }

    @Test
    void secretFilesMustBePrivateAndTheToolSecretMustDifferFromTheMembers() throws Exception
    {
        Files.writeString(dir.resolve("member.secret"), "0123456789abcdef0123456789abcdef\n");
        Files.writeString(dir.resolve("tool.secret"), "fedcba9876543210fedcba9876543210\n");
        Files.setPosixFilePermissions(dir.resolve("member.secret"),
            PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(dir.resolve("tool.secret"),
            PosixFilePermissions.fromString("rw-------"));
        final String both = GOOD
            + "lockstep.cluster.secret.file=member.secret\nlockstep.tool.secret.file=tool.secret\n";
        assertError("member.secret may be read or written by its group or others (rw-r--r--): chmod 600", both);
        final NodeConfig allowed = NodeConfig.load(write(both + "lockstep.secret.permissions.check=false\n"),
            new Properties());
        assertTrue(null != allowed.security().secret() && null != allowed.security().toolSecret());

        Files.setPosixFilePermissions(dir.resolve("member.secret"),
            PosixFilePermissions.fromString("rw-------"));
        final SecuritySettings security = NodeConfig.load(write(both), new Properties()).security();
        assertTrue(security.warnings().stream().noneMatch(w -> w.contains("no tool is trusted")), security.warnings()
            .toString());
        assertError("lockstep.tool.secret.file and lockstep.cluster.secret.file name the same file",
            GOOD + "lockstep.cluster.secret.file=member.secret\nlockstep.tool.secret.file=./member.secret\n");
        assertError("lockstep.tool.secret.file and lockstep.cluster.secret.accept.file name the same file",
            both + "lockstep.cluster.secret.accept.file=tool.secret\n");
        assertError("lockstep.tool.secret.accept.file and lockstep.cluster.secret.file name the same file",
            both + "lockstep.tool.secret.accept.file=member.secret\n");
        assertError("next.secret not found: while rotating, this is the other secret", both +
            "lockstep.cluster.secret.accept.file=next.secret\n");
        Files.writeString(dir.resolve("next.secret"), "00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(dir.resolve("next.secret"),
            PosixFilePermissions.fromString("rw-------"));
        assertTrue(null != NodeConfig.load(write(both + "lockstep.cluster.secret.accept.file=next.secret\n"),
            new Properties()).security().secret());
        final SecuritySettings noTool = NodeConfig.load(write(GOOD + "lockstep.cluster.secret.file=member.secret\n"),
            new Properties()).security();
        assertTrue(noTool.warnings().stream().anyMatch(w -> w.contains("no tool is trusted")), noTool.warnings()
            .toString());
    }

    @Test
    void tlsKeysNameTheirMistakesAndAMemberNeedsACertificateOfItsOwn() throws Exception
    {
        DevCertificates.write(dir.resolve("tls"), List.of("127.0.0.1"));
        final String files = "lockstep.tls.certificate.file=tls/member.pem\nlockstep.tls.key.file=tls/member.key\n" +
            "lockstep.tls.trust.file=tls/ca.pem\n";

        final SecuritySettings off = NodeConfig.load(write(GOOD), new Properties()).security();
        assertEquals(TlsSettings.NONE, off.tls());
        assertTrue(off.warnings().stream().anyMatch(w -> w.contains("TLS is OFF")), off.warnings().toString());

        final NodeConfig all = NodeConfig.load(write(GOOD + files + "lockstep.tls.links=all\n"), new Properties());
        assertEquals(EnumSet.allOf(LinkClass.class), all.security().tls()
            .links());
        assertTrue(all.security().tls().files().hasIdentity());
        final long expiry = all.security().tls().expiry();
        final long in825Days = Instant.now().plus(Duration.ofDays(825)).getEpochSecond();
        assertTrue(Math.abs(expiry - in825Days) < 3600, "the development certificate's 825 days: " + expiry);
        assertEquals(0, TlsSettings.NONE.expiry());
        assertTrue(null != all.security().tls().forTools());
        all.security().tls().checkMember("member 1");

        final NodeConfig some = NodeConfig.load(write(GOOD + files + "lockstep.tls.links=standby, clients\n"),
            new Properties());
        assertEquals(EnumSet.of(LinkClass.STANDBY,
            LinkClass.CLIENTS), some.security().tls().links());
        assertTrue(some.security().warnings().stream().anyMatch(w -> w.equals("links in the clear: members,tools " +
            "(lockstep.tls.links=standby,clients)")), some.security().warnings().toString());
        assertEquals(null, some.security().tls().forTools(), "tools dial in the clear unless tools is named");

        // A tool host: only the authority, and tools named.
        final NodeConfig toolHost = NodeConfig.load(write(GOOD + "lockstep.tls.trust.file=tls/ca.pem\n" +
            "lockstep.tls.links=tools\n"), new Properties());
        assertFalse(toolHost.security().tls().files().hasIdentity());
        assertTrue(null != toolHost.security().tls().forTools());
        final NodeConfig.ConfigException noIdentity = assertThrows(NodeConfig.ConfigException.class,
            () -> toolHost.security().tls().checkMember("member 1"));
        assertTrue(noIdentity.getMessage().contains("needs this member's lockstep.tls.certificate.file"),
            noIdentity.getMessage());

        assertError("lockstep.tls.links: 'zones' is not a link class", GOOD + files + "lockstep.tls.links=zones\n");
        assertError("lockstep.tls.certificate.file and lockstep.tls.key.file go together", GOOD +
            "lockstep.tls.certificate.file=tls/member.pem\nlockstep.tls.trust.file=tls/ca.pem\n");
        assertError("TLS needs lockstep.tls.trust.file", GOOD + "lockstep.tls.links=members\n");
        assertError("tls/missing.pem", GOOD + files.replace("tls/ca.pem", "tls/missing.pem"));
        Files.setPosixFilePermissions(dir.resolve("tls/member.key"),
            PosixFilePermissions.fromString("rw-r-----"));
        assertError("member.key may be read or written by its group or others (rw-r-----): chmod 600", GOOD + files);
    }

    @Test
    void clientAndMetricsBoundsAreKeysWithDefaults() throws Exception
    {
        final NodeConfig defaults = NodeConfig.load(write(GOOD), new Properties());
        assertEquals(ConnectionLimits.DEFAULTS, defaults.security().limits());
        assertEquals(SessionLimits.DEFAULTS, defaults.security().sessionLimits());
        assertEquals(new MetricsSettings(0, "127.0.0.1", 5000), defaults.metrics());
        final NodeConfig set = NodeConfig.load(write(GOOD + "lockstep.client.connections.max=10\n" +
            "lockstep.client.handshakes.max=5\nlockstep.client.idle.timeout.ms=20000\n" +
            "lockstep.client.sessions.per.connection=2\nlockstep.client.sessions.per.principal=3\n" +
            "lockstep.client.session.opens.per.second=4\nlockstep.metrics.address=0.0.0.0\n" +
            "lockstep.client.buffers.max.bytes=2000000\n"), new Properties());
        assertEquals(new ConnectionLimits(10, 5, 20_000_000_000L, 2_000_000),
            set.security().limits());
        assertEquals(new SessionLimits(2, 3, 4), set.security().sessionLimits());
        assertEquals("0.0.0.0", set.metrics().address());
        assertError("lockstep.client.idle.timeout.ms must be at least 10000", GOOD +
            "lockstep.client.idle.timeout.ms=5000\n");
        assertError("session bounds must be at least 1", GOOD + "lockstep.client.sessions.per.connection=0\n");
    }

    private void assertError(final String expected, final String content) throws Exception
    {
        final NodeConfig.ConfigException ex = assertThrows(NodeConfig.ConfigException.class,
            () -> NodeConfig.load(write(content), new Properties()));
        assertTrue(ex.getMessage().contains(expected), "expected '" + expected + "' in: " + ex.getMessage());
    }

    private Path write(final String content) throws Exception
    {
        final Path file = dir.resolve("node.properties");
        Files.writeString(file, content);
        return file;
    }
}
