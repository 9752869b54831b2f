package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopbackEchoTest
{
    private static final int SIZE = 288;

    @Test
    void aServerThatStopsReadingRefusesTheClientsOffersAndGetsEveryByteOnceItReadsAgain() throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            SocketChannel channel = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            Selector selector = Selector.open())
        {
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ);
            final LoopbackEcho.SocketClient client =
                new LoopbackEcho.SocketClient(channel, selector, SIZE, new Histogram(3));

            // The server reads nothing: the socket fills, and the client must say so rather than wait in its write.
            final long offered = assertTimeoutPreemptively(Duration.ofSeconds(30), () ->
            {
                long n = 0;
                while (client.offer(client.message, SIZE))
                {
                    n++;
                    client.poll();
                }
                return n;
            });
            assertTrue(offered > 0, "some offers were taken before the socket filled");

            // The server reads again: every byte of every offer taken arrives, and nothing of the refused one.
            accepted.configureBlocking(false);
            final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
            long received = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (received < offered * SIZE && System.nanoTime() < deadline)
            {
                client.poll();
                in.clear();
                received += Math.max(0, accepted.read(in));
            }
            client.poll();
            in.clear();
            received += Math.max(0, accepted.read(in));
            assertEquals(offered * SIZE, received, "bytes of the " + offered + " offers taken");
        }
    }
}
