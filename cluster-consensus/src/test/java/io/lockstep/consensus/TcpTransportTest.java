package io.lockstep.consensus;

import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.SelectorIdleStrategy;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.StatusRequestEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpTransportTest
{
    private final List<Member> members = new ArrayList<>();
    private final List<TcpTransport> transports = new ArrayList<>();
    private final List<long[]> received = new ArrayList<>();

    @AfterEach
    void close()
    {
        transports.forEach(TcpTransport::close);
    }

    @Test
    void membersConnectAndExchangeMessagesInOrder() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = transport(0);
        final TcpTransport b = transport(1);
        awaitPolling(() -> a.isConnected(1) && b.isConnected(0), a, b);

        final UnsafeBuffer message = statusRequest(0);
        for (int i = 0; i < 1000; i++)
        {
            message.putLong(MessageHeaderEncoder.ENCODED_LENGTH, i);
            while (!a.send(1, message, 0, message.capacity()))
            {
                a.flush(System.nanoTime());
            }
        }
        awaitPolling(() -> received.size() == 1000, a, b);
        for (int i = 0; i < 1000; i++)
        {
            assertEquals(0, received.get(i)[0], "from member 0");
            assertEquals(i, received.get(i)[1], "in order");
        }
    }

    @Test
    void theSelectorIdleStrategyWakesWhenAMessageArrivesNotAtTheEndOfItsWait() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = transport(0);
        final TcpTransport b = transport(1);
        awaitPolling(() -> a.isConnected(1) && b.isConnected(0), a, b);
        awaitPolling(() -> 0 == b.poll(System.nanoTime(), (from, buffer, offset, length) -> { }), a, b);

        final SelectorIdleStrategy idle =
            new SelectorIdleStrategy(b, 0, 0, 60_000);
        final Thread sender = new Thread(() ->
        {
            final UnsafeBuffer message = statusRequest(0);
            while (!a.send(1, message, 0, message.capacity()))
            {
                Thread.onSpinWait();
            }
            a.flush(System.nanoTime());
        });
        final long start = System.nanoTime();
        sender.start();
        idle.idle(0);
        final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        sender.join();
        assertTrue(waitedMs < 30_000, "woke when the message arrived, after " + waitedMs + " ms of a 60 s wait");
        awaitPolling(() -> received.size() == 1, a, b);
    }

    @Test
    void aPeerSpeakingGarbageIsDisconnectedAndTheMemberCarriesOn() throws Exception
    {
        membersOnFreePorts(1);
        final TcpTransport member = transport(0);
        for (final byte[] garbage : List.of(
            frame(new byte[]{ 1, 2, 3 }),                              // shorter than a message header
            lengthPrefix(100_000_000),                                 // absurd length
            frame(headerOnly(999, 1, 1)),                              // another schema
            frame(headerOnly(102, 99, 1)),                             // a newer protocol version
            frame(headerOnly(102, 1, 12))))                            // a first message that is not Hello
        {
            try (Socket socket = new Socket("127.0.0.1", members.get(0).port()))
            {
                socket.setSoTimeout(5000);
                final OutputStream out = socket.getOutputStream();
                out.write(garbage);
                out.flush();
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                boolean closed = false;
                while (!closed && System.nanoTime() < deadline)
                {
                    member.poll(System.nanoTime(), (from, buffer, offset, length) -> { });
                    try
                    {
                        socket.setSoTimeout(10);
                        closed = socket.getInputStream().read() < 0;
                    }
                    catch (final SocketTimeoutException ex)
                    {
                        // still open
                    }
                    catch (final IOException ex)
                    {
                        closed = true;
                    }
                }
                assertTrue(closed, "garbage of " + garbage.length + " bytes got the peer disconnected");
            }
        }

        // And a well-behaved client still gets through.
        try (Socket socket = new Socket("127.0.0.1", members.get(0).port()))
        {
            socket.getOutputStream().write(frame(hello(-1)));
            socket.getOutputStream().write(frame(statusRequestBytes()));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (received.isEmpty() && System.nanoTime() < deadline)
            {
                member.poll(System.nanoTime(), (from, buffer, offset, length) ->
                    received.add(new long[]{ from, 0 }));
            }
            assertEquals(1, received.size());
            assertTrue(received.get(0)[0] >= Transport.CLIENT_ENDPOINT_BASE, "a client endpoint id");
        }
    }

    @Test
    void aMemberWithAnotherSegmentLengthIsRefused() throws Exception
    {
        membersOnFreePorts(2);
        final TcpTransport a = new TcpTransport(0, members, 1 << 20, 1 << 16, null,
            MemberProtocolShapes.create());
        final TcpTransport b = new TcpTransport(1, members, 1 << 21, 1 << 16, null,
            MemberProtocolShapes.create());
        transports.add(a);
        transports.add(b);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        while (System.nanoTime() < deadline)
        {
            a.poll(System.nanoTime(), (f, buf, o, l) -> { });
            b.poll(System.nanoTime(), (f, buf, o, l) -> { });
            a.flush(System.nanoTime());
            b.flush(System.nanoTime());
            assertTrue(!b.isConnected(0), "never accepted as a peer");
        }
    }

    private void membersOnFreePorts(final int count) throws IOException
    {
        for (int i = 0; i < count; i++)
        {
            try (ServerSocket socket = new ServerSocket(0))
            {
                members.add(new Member(i, "127.0.0.1", socket.getLocalPort(), true));
            }
        }
    }

    private TcpTransport transport(final int id)
    {
        final TcpTransport t = new TcpTransport(id, members, 1 << 20, 1 << 16, null,
            MemberProtocolShapes.create());
        transports.add(t);
        return t;
    }

    private void awaitPolling(final BooleanSupplier condition, final TcpTransport... all)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "condition not reached in 10 s");
            for (final TcpTransport t : all)
            {
                t.poll(System.nanoTime(), (from, buffer, offset, length) -> received.add(
                    new long[]{ from, buffer.getLong(offset + MessageHeaderEncoder.ENCODED_LENGTH) }));
                t.flush(System.nanoTime());
            }
        }
    }

    private static UnsafeBuffer statusRequest(final long correlationId)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MessageHeaderEncoder.ENCODED_LENGTH +
            StatusRequestEncoder.BLOCK_LENGTH]);
        new StatusRequestEncoder().wrapAndApplyHeader(buffer, 0,
            new MessageHeaderEncoder()).correlationId(correlationId);
        return buffer;
    }

    private static byte[] statusRequestBytes()
    {
        return statusRequest(7).byteArray();
    }

    private static byte[] hello(final int memberId)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[
            io.lockstep.cluster.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            HelloEncoder.BLOCK_LENGTH]);
        new HelloEncoder().wrapAndApplyHeader(buffer, 0,
            new io.lockstep.cluster.codecs.MessageHeaderEncoder())
            .memberId(memberId).segmentLength(0).authenticate(BooleanFlag.FALSE);
        return buffer.byteArray();
    }

    private static byte[] headerOnly(final int schemaId, final int version, final int templateId)
    {
        final ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort((short)8).putShort((short)templateId).putShort((short)schemaId).putShort((short)version);
        return b.array();
    }

    private static byte[] frame(final byte[] message)
    {
        final ByteBuffer b = ByteBuffer.allocate(4 + message.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(message.length).put(message);
        return b.array();
    }

    private static byte[] lengthPrefix(final int length)
    {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(length).array();
    }
}
