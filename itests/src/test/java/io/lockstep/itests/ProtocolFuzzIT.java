package io.lockstep.itests;

import io.lockstep.cluster.client.ClusterClient;
import io.lockstep.cluster.codecs.BooleanFlag;
import io.lockstep.cluster.codecs.HelloEncoder;
import io.lockstep.cluster.codecs.HelloProofEncoder;
import io.lockstep.cluster.codecs.IngressEncoder;
import io.lockstep.cluster.codecs.KeepAliveEncoder;
import io.lockstep.cluster.codecs.MessageHeaderEncoder;
import io.lockstep.cluster.codecs.SessionCloseRequestEncoder;
import io.lockstep.cluster.codecs.SessionConnectEncoder;
import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.codecs.AppendRequestEncoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ClientAppendEncoder;
import io.lockstep.consensus.codecs.RequestVoteEncoder;
import io.lockstep.consensus.codecs.ShutdownRequestEncoder;
import io.lockstep.consensus.codecs.SuspendRequestEncoder;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.localcluster.LocalCluster;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded fuzzer against three live member processes (member and tool secrets on, token-file client authentication).
 * First each member gets the handshake message that once stopped a member (a Hello filling the 8 KiB pre-handshake
 * buffer, then a proof shorter than its block). Then each seed opens a connection to a member and sends one class of
 * input: a mix of random bytes, bad length prefixes and real client- and member-protocol messages (handshakes, connects
 * with random credentials, ingress, tool requests, Raft messages) with bytes flipped, fields randomised and tails
 * cut off; a message cut short of its fields with whole ones after it; a block length shorter or longer than the
 * schema's; a message straddling the end of the pre-handshake buffer; many messages coalesced in one write; or
 * handshake messages out of order. Then a flood of connections that never say Hello.
 * Afterwards every member must still run and answer, nothing may have been appended (no one who sent garbage holds
 * the secret or a token), the members must have logged reasons, and a genuine client must still get through.
 * {@code -Dlockstep.fuzz.seeds=N} (default 1,000) and {@code -Dlockstep.fuzz.firstSeed=S}; a failure names its seed.
 */
class ProtocolFuzzIT
{
    private static final int SEEDS = Integer.getInteger("lockstep.fuzz.seeds", 1000);
    private static final long FIRST_SEED = Long.getLong("lockstep.fuzz.firstSeed", 1);

    @TempDir
    Path dir;

    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[4096]);

    @Test
    void garbageFromAnyoneLeavesEveryMemberUpAndTheLogUntouched() throws Exception
    {
        try (LocalCluster cluster = new LocalCluster(dir, 3, "none", 1 << 20, "io.lockstep.examples.EchoService"))
        {
            Files.writeString(dir.resolve("tokens.properties"), "alice=" + HexFormat.of().formatHex(
                MessageDigest.getInstance("SHA-256").digest("secret-token".getBytes(StandardCharsets.US_ASCII))) +
                "\n");
            cluster.configureAll("lockstep.client.authenticator", "token-file");
            cluster.configureAll("lockstep.client.tokens.file", "tokens.properties");
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            try (AdminClient admin = cluster.adminClient())
            {
                final Map<Integer, AdminClient.Status> before = admin.awaitConverged(20_000);
                assertNotNull(before, "converged before fuzzing");

                for (final Member member : cluster.members())
                {
                    sendOnce(member.port(), HostileBytes.helloFillingThePreHandshakeBufferThenAShortProof());
                }
                int messages = 0;
                for (long seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++)
                {
                    messages += fuzzOneConnection(cluster, seed);
                }
                final int flood = floodOfSilentConnects(cluster);

                final Map<Integer, AdminClient.Status> after = admin.awaitConverged(20_000);
                if (null == after)
                {
                    final StringBuilder outputs = new StringBuilder();
                    for (int i = 0; i < 3; i++)
                    {
                        final String out = cluster.output(i);
                        outputs.append("--- member ").append(i).append('\n')
                            .append(out.substring(Math.max(0, out.length() - 3000)));
                    }
                    throw new AssertionError("not every member answers and agrees after fuzzing: " +
                        admin.status(1000) + "\n" + outputs);
                }
                for (int i = 0; i < 3; i++)
                {
                    assertTrue(cluster.pid(i) > 0 && ProcessHandle.of(cluster.pid(i)).map(ProcessHandle::isAlive)
                        .orElse(false), "member " + i + " is still running\n" + cluster.output(i));
                    assertEquals(before.get(i).term(), after.get(i).term(), "member " + i + ": no election; before " +
                        before + " after " + after);
                    assertEquals(before.get(i).logPosition(), after.get(i).logPosition(),
                        "member " + i + ": nothing appended by garbage");
                    assertEquals(before.get(i).term(), after.get(i).term(), "member " + i + ": no election");
                }
                long logged = 0;
                for (final AdminClient.Errors e : admin.errors(2000).values())
                {
                    logged += e.total();
                }
                assertTrue(logged > 0, "the members logged reasons");
                System.out.printf("protocol fuzz: seeds %d-%d, %d fuzzed messages, %d silent connects, %d errors " +
                    "logged by the members, log and term unchanged, every member up%n", FIRST_SEED,
                    FIRST_SEED + SEEDS - 1, messages, flood, logged);
            }

            final int[] echoes = new int[1];
            try (ClusterClient alice = ClusterClient.connect(cluster.members(), (s, q, b, o, l) -> echoes[0]++,
                ClusterClient.Settings.DEFAULTS, "alice:secret-token".getBytes(StandardCharsets.US_ASCII)))
            {
                assertTrue(alice.awaitConnected(10_000), "a genuine client still gets in");
                assertTrue(alice.offer(new UnsafeBuffer(new byte[32]), 0, 32) >= 0);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (echoes[0] == 0)
                {
                    assertTrue(System.nanoTime() < deadline, "echo within 10 s");
                    alice.poll();
                }
            }
        }
    }

    private int fuzzOneConnection(final LocalCluster cluster, final long seed) throws IOException
    {
        final Random random = new Random(seed);
        final int port = cluster.members().get(random.nextInt(3)).port();
        int sent = 0;
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port)))
        {
            final FuzzClass kind = FuzzClass.values()[random.nextInt(FuzzClass.values().length)];
            final ByteArrayOutputStream coalesced = new ByteArrayOutputStream();
            switch (kind)
            {
                case MIXED ->
                {
                    if (random.nextInt(10) < 8)
                    {
                        write(channel, random, helloMessage(random), true);
                    }
                    final int count = 1 + random.nextInt(20);
                    for (int i = 0; i < count; i++)
                    {
                        write(channel, random, nextMessage(random), random.nextInt(10) < 7);
                        sent++;
                    }
                }
                case CUT ->
                {
                    // A message whose length prefix (and bytes) stop short of its fields, with whole ones after.
                    coalesced.writeBytes(HostileBytes.frame(HostileBytes.hello(-1, false)));
                    final byte[] message = nextMessage(random);
                    coalesced.writeBytes(HostileBytes.frame(Arrays.copyOf(message, random.nextInt(message.length))));
                    sent += 1 + appendMessages(coalesced, random, random.nextInt(5));
                }
                case BLOCK_LENGTH ->
                {
                    coalesced.writeBytes(HostileBytes.frame(HostileBytes.hello(-1, false)));
                    sent += appendMessages(coalesced, random, random.nextInt(3));
                    coalesced.writeBytes(HostileBytes.frame(withBlockLength(random, nextMessage(random))));
                    sent += 1 + appendMessages(coalesced, random, random.nextInt(3));
                }
                case STRADDLE ->
                {
                    // Whole messages up to near the end of the 8 KiB pre-handshake buffer, then one (whole, cut
                    // or with another block length) across it.
                    final byte[] hello = HostileBytes.hello(-1, random.nextInt(4) == 0);
                    coalesced.writeBytes(HostileBytes.frame(hello));
                    final int boundary = 8 * 1024 - 64 + random.nextInt(128);
                    while (coalesced.size() < boundary)
                    {
                        coalesced.writeBytes(HostileBytes.frame(HostileBytes.keepAlive(random.nextInt(5))));
                        sent++;
                    }
                    final byte[] across = nextMessage(random);
                    coalesced.writeBytes(HostileBytes.frame(switch (random.nextInt(3))
                    {
                        case 0 -> across;
                        case 1 -> Arrays.copyOf(across, random.nextInt(across.length));
                        default -> withBlockLength(random, across);
                    }));
                    sent += 1 + appendMessages(coalesced, random, random.nextInt(4));
                }
                case COALESCED ->
                {
                    if (random.nextBoolean())
                    {
                        coalesced.writeBytes(HostileBytes.frame(helloMessage(random)));
                    }
                    for (int i = 1 + random.nextInt(30); i > 0; i--)
                    {
                        final byte[] message = nextMessage(random);
                        coalesced.writeBytes(HostileBytes.frame(random.nextInt(8) == 0 ? flip(random, message) :
                            message));
                        sent++;
                    }
                }
                case HANDSHAKE_ORDER ->
                {
                    for (int i = 1 + random.nextInt(4); i > 0; i--)
                    {
                        coalesced.writeBytes(HostileBytes.frame(switch (random.nextInt(4))
                        {
                            case 0 -> helloMessage(random);
                            case 1 -> HostileBytes.helloReply(random.nextInt(4) - 1);
                            case 2 -> HostileBytes.helloProof(randomBytes(random, 32));
                            default -> nextMessage(random);
                        }));
                        sent++;
                    }
                }
                default -> throw new IllegalStateException(kind.name());
            }
            if (coalesced.size() > 0)
            {
                final ByteBuffer out = ByteBuffer.wrap(coalesced.toByteArray());
                while (out.hasRemaining())
                {
                    channel.write(out);
                }
            }
            drain(channel);
        }
        catch (final IOException ex)
        {
            // The member hung up on the garbage: what it should do.
        }
        catch (final AssertionError | RuntimeException ex)
        {
            throw new AssertionError("protocol fuzz seed " + seed + ": " + ex, ex);
        }
        return sent;
    }

    /** The classes of input each seed draws one of: the first one of old, and those aimed at edges. */
    private enum FuzzClass
    {
        MIXED,
        CUT,
        BLOCK_LENGTH,
        STRADDLE,
        COALESCED,
        HANDSHAKE_ORDER
    }

    private int appendMessages(final ByteArrayOutputStream out, final Random random, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            out.writeBytes(HostileBytes.frame(nextMessage(random)));
        }
        return count;
    }

    /** The message with its header's block length made shorter or longer than the schema's. */
    private static byte[] withBlockLength(final Random random, final byte[] message)
    {
        final byte[] changed = message.clone();
        final int blockLength = (changed[0] & 0xFF) | (changed[1] & 0xFF) << 8;
        final int other = switch (random.nextInt(4))
        {
            case 0 -> 0;
            case 1 -> Math.max(0, blockLength - 1 - random.nextInt(8));
            case 2 -> blockLength + 1 + random.nextInt(64);
            default -> 0xFFFF;
        };
        changed[0] = (byte)other;
        changed[1] = (byte)(other >> 8);
        return changed;
    }

    private static byte[] flip(final Random random, final byte[] message)
    {
        final byte[] changed = message.clone();
        changed[random.nextInt(changed.length)] = (byte)random.nextInt(256);
        return changed;
    }

    /** Read whatever the member answers, briefly, so it is never blocked writing to us. */
    private static void drain(final SocketChannel channel) throws IOException
    {
        channel.configureBlocking(false);
        final ByteBuffer sink = ByteBuffer.allocate(1 << 16);
        final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
        while (System.nanoTime() < until && channel.read(sink.clear()) >= 0)
        {
            Thread.onSpinWait();
        }
    }

    private static void sendOnce(final int port, final byte[] bytes) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port)))
        {
            final ByteBuffer out = ByteBuffer.wrap(bytes);
            while (out.hasRemaining())
            {
                channel.write(out);
            }
            drain(channel);
        }
        catch (final IOException ex)
        {
            // Hung up on: expected.
        }
    }

    private int floodOfSilentConnects(final LocalCluster cluster) throws IOException
    {
        final List<SocketChannel> open = new ArrayList<>();
        try
        {
            for (int i = 0; i < 300; i++)
            {
                try
                {
                    open.add(SocketChannel.open(new InetSocketAddress("127.0.0.1",
                        cluster.members().get(i % 3).port())));
                }
                catch (final IOException ex)
                {
                    break;
                }
            }
            return open.size();
        }
        finally
        {
            for (final SocketChannel c : open)
            {
                c.close();
            }
        }
    }

    /** A length prefix (right, or sometimes wrong) and the message, with some bytes flipped. */
    private void write(final SocketChannel channel, final Random random, final byte[] message, final boolean clean)
        throws IOException
    {
        final byte[] body = message.clone();
        if (!clean)
        {
            final int flips = 1 + random.nextInt(4);
            for (int i = 0; i < flips && body.length > 0; i++)
            {
                body[random.nextInt(body.length)] = (byte)random.nextInt(256);
            }
        }
        int length = body.length;
        if (!clean && random.nextInt(5) == 0)
        {
            length = switch (random.nextInt(4))
            {
                case 0 -> -1 - random.nextInt(1000);
                case 1 -> random.nextInt(8);
                case 2 -> Integer.MAX_VALUE - random.nextInt(1000);
                default -> body.length + random.nextInt(64);
            };
        }
        final int cut = !clean && random.nextInt(6) == 0 ? random.nextInt(body.length + 1) : body.length;
        final ByteBuffer out = ByteBuffer.allocate(4 + cut).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(length).put(body, 0, cut).flip();
        while (out.hasRemaining())
        {
            channel.write(out);
        }
    }

    private byte[] helloMessage(final Random random)
    {
        final int memberId = random.nextInt(4) == 0 ? random.nextInt(5) - 1 : -1;
        final HelloEncoder hello = new HelloEncoder().wrapAndApplyHeader(scratch, 0, new MessageHeaderEncoder())
            .memberId(memberId).segmentLength(1 << 20)
            .authenticate(random.nextBoolean() ? BooleanFlag.TRUE :
                BooleanFlag.FALSE)
            .putNonce(randomBytes(random, 16), 0, 16);
        return bytes(MessageHeaderEncoder.ENCODED_LENGTH + hello.encodedLength());
    }

    private byte[] nextMessage(final Random random)
    {
        final MessageHeaderEncoder client = new MessageHeaderEncoder();
        final io.lockstep.consensus.codecs.MessageHeaderEncoder member =
            new io.lockstep.consensus.codecs.MessageHeaderEncoder();
        final byte[] credentials = randomBytes(random, random.nextInt(40));
        final byte[] payload = randomBytes(random, random.nextInt(300));
        final int length = switch (random.nextInt(12))
        {
            case 0 -> copy(randomBytes(random, 8 + random.nextInt(200)));
            case 1 -> MessageHeaderEncoder.ENCODED_LENGTH + new SessionConnectEncoder()
                .wrapAndApplyHeader(scratch, 0, client).correlationId(random.nextLong())
                .resumeSessionId(random.nextInt(5) - 1).lastEgressSequence(random.nextInt(10) - 1)
                .putCredentials(credentials, 0, credentials.length).encodedLength();
            case 2 -> MessageHeaderEncoder.ENCODED_LENGTH + new IngressEncoder().wrapAndApplyHeader(scratch, 0, client)
                .sessionId(random.nextInt(5)).sequence(random.nextInt(5))
                .putPayload(payload, 0, payload.length).encodedLength();
            case 3 -> MessageHeaderEncoder.ENCODED_LENGTH + new KeepAliveEncoder().wrapAndApplyHeader(scratch, 0,
                client)
                .sessionId(random.nextInt(5)).lastEgressSequence(random.nextInt(5)).encodedLength();
            case 4 -> MessageHeaderEncoder.ENCODED_LENGTH + new SessionCloseRequestEncoder()
                .wrapAndApplyHeader(scratch, 0, client).sessionId(random.nextInt(5)).encodedLength();
            case 5 -> MessageHeaderEncoder.ENCODED_LENGTH + new HelloProofEncoder()
                .wrapAndApplyHeader(scratch, 0, client).putProof(randomBytes(random, 32), 0, 32).encodedLength();
            case 6 -> MessageHeaderEncoder.ENCODED_LENGTH + new ClientAppendEncoder()
                .wrapAndApplyHeader(scratch, 0, member).correlationId(random.nextLong())
                .putPayload(randomBytes(random, 64), 0, 64).encodedLength();
            case 7 -> MessageHeaderEncoder.ENCODED_LENGTH + new ShutdownRequestEncoder()
                .wrapAndApplyHeader(scratch, 0, member).correlationId(random.nextLong()).encodedLength();
            case 8 -> MessageHeaderEncoder.ENCODED_LENGTH + new SuspendRequestEncoder()
                .wrapAndApplyHeader(scratch, 0, member).correlationId(random.nextLong())
                .suspend(BooleanType.TRUE).encodedLength();
            case 9 -> MessageHeaderEncoder.ENCODED_LENGTH + new RequestVoteEncoder()
                .wrapAndApplyHeader(scratch, 0, member).term(random.nextInt(1000)).candidateId(random.nextInt(3))
                .lastLogTerm(random.nextInt(1000)).lastLogPosition(random.nextInt(1 << 20))
                .preVote(BooleanType.FALSE)
                .transfer(BooleanType.TRUE).encodedLength();
            case 10 -> MessageHeaderEncoder.ENCODED_LENGTH + new AppendRequestEncoder()
                .wrapAndApplyHeader(scratch, 0, member).term(random.nextInt(1000)).leaderId(random.nextInt(3))
                .sequence(random.nextLong()).prevPosition(0).prevTerm(0).commitPosition(random.nextInt(1 << 20))
                .putLogBytes(randomBytes(random, 96), 0, 96).encodedLength();
            default -> copy(helloMessage(random));
        };
        return bytes(length);
    }

    /** Copies bytes into scratch at 0 (for the cases built outside an encoder). */
    private int copy(final byte[] bytes)
    {
        scratch.putBytes(0, bytes);
        return bytes.length;
    }

    private byte[] bytes(final int length)
    {
        final byte[] out = new byte[length];
        scratch.getBytes(0, out);
        return out;
    }

    private static byte[] randomBytes(final Random random, final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }
}
