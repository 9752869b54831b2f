package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
                client.message.putLong(0, n);
                while (client.offer(client.message, SIZE))
                {
                    client.message.putLong(0, ++n);
                    client.poll();
                }
                return n;
            });
            assertTrue(offered > 0, "some offers were taken before the socket filled");

            // The server reads again: every offer taken arrives once, in order, and nothing of the refused one.
            accepted.configureBlocking(false);
            final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
            long received = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && (received < offered || in.position() > 0))
            {
                client.poll();
                if (accepted.read(in) <= 0 && received >= offered)
                {
                    break;
                }
                in.flip();
                while (in.remaining() >= SIZE)
                {
                    assertEquals(received, in.getLong(in.position()), "the offer arriving as number " + received);
                    in.position(in.position() + SIZE);
                    received++;
                }
                in.compact();
            }
            assertEquals(offered, received, "offers taken and offers that arrived");
            assertEquals(0, in.position(), "no part of the refused offer arrived");
        }
    }
}
