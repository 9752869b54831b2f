package io.lockstep.examples.quickstart;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.transport.TlsFiles;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Path;

/**
 * {@link TotalClient} over TLS: it trusts the authority that signs the members' certificates, and sends one
 * number. {@code TlsTotalClient MEMBERS CA_FILE}, for example {@code TlsTotalClient
 * 0=127.0.0.1:9101,1=127.0.0.1:9102,2=127.0.0.1:9103 config/local/tls/ca.pem}.
 */
public final class TlsTotalClient
{
    private TlsTotalClient()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final String members = args[0];
        final TlsFiles tls = TlsFiles.trusting(Path.of(args[1]));   // throws IOException naming a bad file
        try (ClusterClient client = ClusterClient.connect(members,
            (sessionId, sequence, buffer, offset, length) -> System.out.println("total " + buffer.getLong(offset)),
            ClusterClient.Settings.DEFAULTS, new byte[0], tls))
        {
            if (!client.awaitConnected(10_000))
            {
                throw new IllegalStateException("no session within 10 s: " + client.closeReason());
            }
            final UnsafeBuffer one = new UnsafeBuffer(new byte[Long.BYTES]);
            one.putLong(0, 1);
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (client.offer(one, 0, Long.BYTES) < 0 && System.nanoTime() < deadline)
            {
                client.poll();
            }
            while (client.acknowledgedSequence() < 0 && System.nanoTime() < deadline)
            {
                client.poll();
            }
        }
    }
}
