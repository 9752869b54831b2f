package io.lockstep.examples.quickstart;

import io.lockstep.cluster.client.ClusterClient;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Sends the numbers 1 to N to the cluster and prints each total it answers with:
 * {@code TotalClient 0=127.0.0.1:9101,1=127.0.0.1:9102,2=127.0.0.1:9103 [N]}.
 */
public final class TotalClient
{
    private TotalClient()
    {
    }

    public static void main(final String[] args)
    {
        final String members = args[0];
        final int count = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        final long[] answers = new long[1];
        try (ClusterClient client = ClusterClient.connect(members,
            (sessionId, sequence, buffer, offset, length) ->
            {
                answers[0]++;
                System.out.println("total " + buffer.getLong(offset));
            }))
        {
            if (!client.awaitConnected(10_000))
            {
                throw new IllegalStateException("no session within 10 s: " + client.closeReason());
            }
            final UnsafeBuffer message = new UnsafeBuffer(new byte[Long.BYTES]);
            final long deadline = System.nanoTime() + 30_000_000_000L;
            for (long n = 1; n <= count && System.nanoTime() < deadline; )
            {
                message.putLong(0, n);
                if (client.offer(message, 0, Long.BYTES) >= 0)
                {
                    n++;
                }
                client.poll();
            }
            while (answers[0] < count && System.nanoTime() < deadline)
            {
                client.poll();
            }
            if (answers[0] < count)
            {
                throw new IllegalStateException(answers[0] + " of " + count + " answered within 30 s: " +
                    client.closeReason());
            }
        }
    }
}
