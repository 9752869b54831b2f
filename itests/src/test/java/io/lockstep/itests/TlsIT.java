package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.DevCertificates;
import io.lockstep.cluster.transport.TlsFiles;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every link class encrypted ({@code lockstep.tls.links=all}), as processes: three voting members and a warm
 * standby, a client over TLS under load, and the tool over TLS. With every class required, each member refuses any
 * connection in the clear, so a cluster that elects, commits, feeds its standby and answers the tool is one whose
 * member, standby, client and tool links are all TLS; a client and a tool in the clear are shown to be refused.
 */
class TlsIT
{
    @TempDir
    Path dir;

    @Test
    void aClusterWithEveryLinkEncryptedServesClientsToolsAndItsStandby() throws Exception
    {
        final Path tls = dir.resolve("tls");
        DevCertificates.write(tls, List.of("127.0.0.1", "localhost"));
        try (LocalCluster cluster = new LocalCluster(dir, 4, 1, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            cluster.configureAll("lockstep.tls.links", "all");
            cluster.configureAll("lockstep.tls.certificate.file", tls.resolve(DevCertificates.CERTIFICATE).toString());
            cluster.configureAll("lockstep.tls.key.file", tls.resolve(DevCertificates.KEY).toString());
            cluster.configureAll("lockstep.tls.trust.file", tls.resolve(DevCertificates.AUTHORITY).toString());
            for (int i = 0; i < 4; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = new AdminClient(cluster.members(), cluster.toolSecret(),
                TlsFiles.trusting(tls.resolve(DevCertificates.AUTHORITY))))
            {
                assertTrue(admin.awaitLeader(20_000) >= 0, "a leader over member links that must be TLS");
            }

            final EchoWorkload load = new EchoWorkload(1000);
            try (ClusterClient client = ClusterClient.connect(cluster.members(), load,
                ClusterClient.Settings.DEFAULTS, new byte[0],
                    TlsFiles.trusting(tls.resolve(DevCertificates.AUTHORITY))))
            {
                load.client(client);
                assertTrue(client.awaitConnected(10_000), "a client over TLS");
                load.runFor(2000);
                load.finishAndCheck(10_000, "every link encrypted");
                assertTrue(load.sent() > 1000, "sent " + load.sent());
            }

            final JavaProcess.Result status = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "status",
                "--config", cluster.config(0).toString());
            assertEquals(0, status.exitCode(), status.output());
            assertTrue(status.output().contains("standby=3"), status.output());
            try (AdminClient admin = new AdminClient(cluster.members(), cluster.toolSecret(),
                TlsFiles.trusting(tls.resolve(DevCertificates.AUTHORITY))))
            {
                final Map<Integer, AdminClient.Status> converged = admin.awaitConverged(20_000);
                assertNotNull(converged, "the standby catches up over its TLS link");
                assertEquals(1, converged.values().stream().map(AdminClient.Status::stateHash).distinct().count(),
                    "the standby holds the voting members' state: " + converged);
            }

            // In the clear, a client and a tool get nowhere, and each member says why.
            try (ClusterClient plain = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> { }))
            {
                assertFalse(plain.awaitConnected(2_000), "a client in the clear is refused");
            }
            try (AdminClient plainTool = cluster.adminClient())
            {
                assertTrue(plainTool.status(2_000).isEmpty(), "a tool in the clear is refused");
            }
            final JavaProcess.Result errors = JavaProcess.run("io.lockstep.consensus.tool.ClusterTool", "errors",
                "--config", cluster.config(0).toString());
            assertTrue(errors.output().contains("in the clear: this member requires TLS"), errors.output());
        }
    }
}
