package io.lockstep.benchmarks;

import io.lockstep.localcluster.DelayProxy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The CPU floor of a three-member cluster's message pattern on this machine: three processes that do nothing but
 * move bytes the way members do, driven by the same paced client as the clusters ({@link LoopbackEcho#drive}).
 * <ul>
 *     <li>The leader reads what the client sent and forwards it to both followers, one write each for all it read.</li>
 *     <li>A follower answers each read with an 8-byte acknowledgement: the count of bytes it has had so far.</li>
 *     <li>When either follower has acknowledged bytes (a quorum of two with the leader), the leader echoes them to
 *     the client, one write for all of them.</li>
 * </ul>
 * That is a cluster echo's five hops (two appends, two acknowledgements, the echo; plus the client's own write)
 * with nothing else: no log write, no decoding, no state, no spinning (each process blocks in its selector, which is
 * the cheapest way to wait for a message that travels alone). Its CPU per message, read from /proc like the
 * members', is what any cluster of this shape over TCP costs on this machine, whatever its code.
 * <p>
 * Run with one follower silent ({@code oneAcknowledging}), it receives the appends and never acknowledges: the
 * fewest hops a three-member commit of a message that travels alone can take (both followers must get it, one
 * acknowledgement makes the quorum). That is the floor below which no cluster of three over TCP goes here, even one
 * that gave up hearing its second follower.
 * <p>
 * Run durably ({@code syncs} 1 or 2, {@link RelayLogFile}), each process also appends what it gets to a file of its
 * own and syncs it before it counts: a follower before it acknowledges; the leader on a thread of its own, so that
 * forwarding never waits for its disk and its sync runs while the followers sync theirs. The echo waits for two of
 * the three, the leader's own sync counting as one. Bytes that arrive during a sync go together in the next round.
 * That is the least a cluster that acknowledges only what is on a majority's disk pays on this machine's disk: with
 * one sync per round, any such cluster; with two, one that also keeps a promise as Lockstep's members do.
 */
final class LoopbackRelay
{
    private static final byte CLIENT = 'C';
    private static final byte FOLLOWER = 'F';
    private static final int FOLLOWERS = 2;
    private static final int BUFFER = 4 << 20;
    private static final int WARM_UP_RATE = 10_000;

    /**
     * @param latency    round trips through the relay, as the client measured them.
     * @param cpuSeconds CPU (user plus system) of the leader and the two followers over the measured window.
     */
    record Result(LoopbackEcho.Result latency, double[] cpuSeconds)
    {
        /**
         * @param process 0 the leader, 1 and 2 the followers.
         */
        double cpuUsPerMessage(final int process)
        {
            final long messages = latency.roundTrip.getTotalCount();
            return messages > 0 ? cpuSeconds[process] * 1e6 / messages : -1;
        }

        double membersCpuUsPerMessage()
        {
            return latency.roundTrip.getTotalCount() > 0 ?
                cpuUsPerMessage(0) + cpuUsPerMessage(1) + cpuUsPerMessage(2) : -1;
        }
    }

    private LoopbackRelay()
    {
    }

    /**
     * Start a leader and two followers (processes), warm them up, drive them at the rate and stop them.
     *
     * @return latency and the three processes' CPU over the measured window (after a second not measured).
     */
    static Result run(final int rate, final int size, final int seconds) throws Exception
    {
        return run(rate, size, seconds, false);
    }

    /**
     * As {@link #run(int, int, int)}; with {@code oneAcknowledging} the second follower never acknowledges.
     */
    static Result run(final int rate, final int size, final int seconds, final boolean oneAcknowledging)
        throws Exception
    {
        return run(rate, size, seconds, oneAcknowledging, 0);
    }

    /**
     * As {@link #run(int, int, int, boolean)}, each follower in a zone of its own: it reaches the leader through a
     * {@link DelayProxy} adding {@code delayMs} each way (0: directly), as members across zones do; the client
     * reaches the leader directly.
     */
    static Result run(final int rate, final int size, final int seconds, final boolean oneAcknowledging,
        final long delayMs) throws Exception
    {
        return run(rate, size, seconds, oneAcknowledging, delayMs, 0, null);
    }

    /**
     * As {@link #run(int, int, int)}, durably: each process syncs what it gets {@code syncs} times per round (1 or
     * 2, see {@link RelayLogFile}) in files under {@code dir}, which the caller makes and deletes.
     */
    static Result runDurable(final int rate, final int size, final int seconds, final int syncs, final Path dir)
        throws Exception
    {
        if (syncs < 1 || syncs > 2)
        {
            throw new IllegalArgumentException("syncs per round must be 1 or 2, not " + syncs);
        }
        return run(rate, size, seconds, false, 0, syncs, dir);
    }

    private static Result run(final int rate, final int size, final int seconds, final boolean oneAcknowledging,
        final long delayMs, final int syncs, final Path dir) throws Exception
    {
        final String[] durably = syncs > 0 ? new String[]{ Integer.toString(syncs), dir.toString() } : new String[0];
        final List<Process> processes = new ArrayList<>();
        final List<DelayProxy> proxies = new ArrayList<>();
        try
        {
            final Launched leader = start(processes, concat(new String[]{ "leader" }, durably));
            final String ready = leader.awaitLine("relay leader port=");
            final int port = Integer.parseInt(ready.substring(ready.indexOf('=') + 1).trim());
            for (int i = 0; i < FOLLOWERS; i++)
            {
                final String acknowledges = oneAcknowledging && i == FOLLOWERS - 1 ? "silent" : "acknowledging";
                int dial = port;
                if (delayMs > 0)
                {
                    proxies.add(new DelayProxy(port, delayMs));
                    dial = proxies.get(proxies.size() - 1).port();
                }
                start(processes, concat(new String[]{ "follower", Integer.toString(dial), acknowledges }, durably))
                    .awaitLine("relay follower connected");
            }
            leader.awaitLine("relay leader followers=" + FOLLOWERS);
            final InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
            // Two seconds at 10k msg/s first, not measured, so that the relay runs compiled code as the members do
            // after their pre-warm: else its CPU at a low rate would be the JIT's.
            LoopbackEcho.drive(address, CLIENT, WARM_UP_RATE, size, 1, () -> { });
            final double[] before = new double[processes.size()];
            final LoopbackEcho.Result latency = LoopbackEcho.drive(address, CLIENT,
                rate, size, seconds, () ->
                {
                    for (int i = 0; i < before.length; i++)
                    {
                        before[i] = ProcessStats.cpuSeconds(processes.get(i).pid());
                    }
                });
            final double[] cpu = new double[processes.size()];
            for (int i = 0; i < cpu.length; i++)
            {
                cpu[i] = ProcessStats.cpuSeconds(processes.get(i).pid()) - before[i];
            }
            return new Result(latency, cpu);
        }
        finally
        {
            proxies.forEach(DelayProxy::close);
            for (final Process p : processes)
            {
                p.destroy();
            }
            for (final Process p : processes)
            {
                if (!p.waitFor(10, TimeUnit.SECONDS))
                {
                    p.destroyForcibly();
                }
            }
        }
    }

    static String summary(final int rate, final int size, final Result r)
    {
        return LoopbackEcho.summary(rate, size, r.latency()).replace("mode=echo", "mode=relay") +
            String.format(Locale.ROOT, " leader_cpu_us_per_msg=%.1f follower1_cpu_us_per_msg=%.1f " +
            "follower2_cpu_us_per_msg=%.1f members_cpu_us_per_msg=%.1f", r.cpuUsPerMessage(0), r.cpuUsPerMessage(1),
            r.cpuUsPerMessage(2), r.membersCpuUsPerMessage());
    }

    private static String[] concat(final String[] first, final String[] second)
    {
        final String[] all = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        return all;
    }

    private static Launched start(final List<Process> processes, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
            "-cp", System.getProperty("java.class.path"), LoopbackRelay.class.getName()));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(process);
        return new Launched(process,
            new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
    }

    /**
     * A relay process and the one reader of its output (a second reader could miss what the first read ahead).
     */
    private record Launched(Process process, BufferedReader output)
    {
        /**
         * Read the output until a line starting with the prefix (up to 30 s); any other line is shown.
         */
        String awaitLine(final String prefix) throws Exception
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline)
            {
                if (!process.isAlive() && !output.ready())
                {
                    throw new IllegalStateException("relay process ended (exit " + process.exitValue() +
                        ") before printing '" + prefix + "'");
                }
                if (output.ready())
                {
                    final String line = output.readLine();
                    if (null != line && line.startsWith(prefix))
                    {
                        return line;
                    }
                    System.out.println("relay: " + line);
                }
                else
                {
                    process.waitFor(10, TimeUnit.MILLISECONDS);
                }
            }
            throw new IllegalStateException("relay process did not print '" + prefix + "' in 30 s");
        }
    }

    /**
     * {@code LoopbackRelay leader [SYNCS DIR]} or {@code LoopbackRelay follower PORT acknowledging|silent [SYNCS
     * DIR]}: runs until the connection ends; with SYNCS and DIR, durably.
     */
    public static void main(final String[] args) throws Exception
    {
        final boolean leader = "leader".equals(args[0]);
        final int durableArg = leader ? 1 : 3;
        final int syncs = args.length > durableArg ? Integer.parseInt(args[durableArg]) : 0;
        if (args.length > durableArg && syncs != 1 && syncs != 2)
        {
            throw new IllegalArgumentException("syncs per round must be 1 or 2: " + syncs);
        }
        try (RelayLogFile file = args.length > durableArg ? new RelayLogFile(Path.of(args[durableArg + 1]),
            leader ? "leader" : "follower-" + ProcessHandle.current().pid(), 2 == syncs) : null)
        {
            if (leader)
            {
                lead(file);
            }
            else
            {
                follow(Integer.parseInt(args[1]), "silent".equals(args[2]), file);
            }
        }
    }

    /**
     * @param file null, or where each read is made durable before it is acknowledged.
     */
    private static void follow(final int port, final boolean silent, final RelayLogFile file) throws IOException
    {
        try (SocketChannel leader = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            Selector selector = Selector.open())
        {
            leader.setOption(StandardSocketOptions.TCP_NODELAY, true);
            writeFully(leader, ByteBuffer.allocateDirect(1).put(0, FOLLOWER));
            System.out.println("relay follower connected");
            leader.configureBlocking(false);
            leader.register(selector, SelectionKey.OP_READ);
            final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
            final ByteBuffer ack = ByteBuffer.allocateDirect(Long.BYTES);
            final Consumer<SelectionKey> none = key -> { };
            long received = 0;
            while (true)
            {
                selector.select(none);
                in.clear();
                final int n = leader.read(in);
                if (n < 0)
                {
                    return;
                }
                if (n > 0 && null != file)
                {
                    file.appendDurably(in.flip());
                }
                if (n > 0 && !silent)
                {
                    received += n;
                    ack.clear();
                    ack.putLong(0, received);
                    writeFully(leader, ack);
                }
            }
        }
    }

    /**
     * @param file null, or where what the client sent is made durable after it is forwarded.
     */
    private static void lead(final RelayLogFile file) throws IOException
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("relay leader port=" + ((InetSocketAddress)server.getLocalAddress()).getPort());
            final SocketChannel[] followers = new SocketChannel[FOLLOWERS];
            for (int i = 0; i < FOLLOWERS; i++)
            {
                followers[i] = accept(server, FOLLOWER);
            }
            System.out.println("relay leader followers=" + FOLLOWERS);
            final Leader leader = new Leader(followers, file);
            while (true)
            {
                leader.serve(accept(server, CLIENT));
            }
        }
    }

    private static SocketChannel accept(final ServerSocketChannel server, final byte expectedRole) throws IOException
    {
        final SocketChannel channel = server.accept();
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final ByteBuffer role = ByteBuffer.allocate(1);
        while (role.hasRemaining())
        {
            if (channel.read(role) < 0)
            {
                throw new IOException("peer closed before saying its role");
            }
        }
        if (expectedRole != role.get(0))
        {
            throw new IOException("expected role byte " + expectedRole + ", not " + role.get(0));
        }
        return channel;
    }

    /**
     * The leader's loop: what the client sent goes to both followers, and back to the client once one of them has
     * it. {@code in} holds the client's bytes from the oldest not yet echoed, at position 0. One client at a time,
     * one after another (the first warms the code up); the followers' acknowledgements count from the start.
     */
    private static final class Leader
    {
        private final SocketChannel[] followers;
        private final Selector selector;
        private final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
        private final ByteBuffer view = in.duplicate();
        private final ByteBuffer[] acks = { ByteBuffer.allocateDirect(64 * 1024),
            ByteBuffer.allocateDirect(64 * 1024) };
        private final long[] acked = new long[FOLLOWERS];
        private final Consumer<SelectionKey> onReady = this::onReady;
        private final RelayLogFile file;
        private final ByteBuffer fileView = in.duplicate();
        /** Bytes from every client so far appended to the file, for the sync thread. */
        private final AtomicLong syncRequested = new AtomicLong();
        /** Bytes from every client so far that the sync thread has made durable. */
        private final AtomicLong durableTotal = new AtomicLong();
        private final Thread syncer;
        private SocketChannel client;
        private long echoedTotal;
        private boolean clientClosed;

        Leader(final SocketChannel[] followers, final RelayLogFile file) throws IOException
        {
            this.followers = followers;
            this.file = file;
            this.selector = Selector.open();
            for (int i = 0; i < FOLLOWERS; i++)
            {
                followers[i].configureBlocking(false);
                followers[i].register(selector, SelectionKey.OP_READ, i);
            }
            syncer = null == file ? null : new Thread(this::syncLoop, "relay-leader-sync");
            if (null != syncer)
            {
                syncer.setDaemon(true);
                syncer.start(); // last: it wakes the selector
            }
        }

        void serve(final SocketChannel client) throws IOException
        {
            this.client = client;
            clientClosed = false;
            client.configureBlocking(false);
            final SelectionKey key = client.register(selector, SelectionKey.OP_READ, -1);
            while (!clientClosed)
            {
                selector.select(onReady);
                if (!clientClosed)
                {
                    try
                    {
                        echoCommitted();
                    }
                    catch (final IOException ex)
                    {
                        // The client closed with echoes still due, before the leader read its end of stream (the
                        // load generator closes at its window's end without reading the echoes still on their way):
                        // writing to it fails, which ends this client, not the leader.
                        clientClosed = true;
                    }
                }
            }
            key.cancel();
            client.close();
            selector.selectNow();
            // What the closed client sent and was not yet acknowledged is dropped: count it as echoed.
            echoedTotal += in.position();
            in.clear();
        }

        private void onReady(final SelectionKey key)
        {
            try
            {
                final int index = (Integer)key.attachment();
                if (index < 0)
                {
                    fromClient();
                }
                else
                {
                    fromFollower(index);
                }
            }
            catch (final IOException ex)
            {
                if (key.channel() == client)
                {
                    clientClosed = true;
                }
                else
                {
                    throw new IllegalStateException("follower connection failed", ex);
                }
            }
        }

        private void fromClient() throws IOException
        {
            final int from = in.position();
            if (client.read(in) < 0)
            {
                clientClosed = true;
                return;
            }
            for (final SocketChannel follower : followers)
            {
                view.limit(in.position()).position(from);
                writeFully(follower, view);
            }
            if (null != file)
            {
                // The file counts every byte appended, as the followers' acknowledgements count every byte received.
                fileView.limit(in.position()).position(from);
                try
                {
                    syncRequested.set(file.append(fileView));
                }
                catch (final IOException ex)
                {
                    // Not the client's failure, which is what an IOException from here means to the caller.
                    haltOn("relay leader append failed: " + ex);
                }
                LockSupport.unpark(syncer);
            }
        }

        private void fromFollower(final int index) throws IOException
        {
            final ByteBuffer acks = this.acks[index];
            if (followers[index].read(acks) < 0)
            {
                throw new IOException("follower " + index + " closed the connection");
            }
            // Acknowledgements are cumulative: only the last whole one read counts; a part of one waits for the rest.
            final int whole = acks.position() / Long.BYTES;
            if (whole > 0)
            {
                acked[index] = Math.max(acked[index], acks.getLong((whole - 1) * Long.BYTES));
                acks.flip().position(whole * Long.BYTES);
                acks.compact();
            }
        }

        /** Syncs what the leader appended, round after round, and wakes its selector when a round lands. */
        private void syncLoop()
        {
            long synced = 0;
            while (true)
            {
                final long upTo = syncRequested.get();
                if (upTo == synced)
                {
                    LockSupport.park(this);
                    continue;
                }
                try
                {
                    file.sync(upTo);
                }
                catch (final IOException ex)
                {
                    haltOn("relay leader sync failed: " + ex);
                }
                synced = upTo;
                durableTotal.set(upTo);
                selector.wakeup();
            }
        }

        private void echoCommitted() throws IOException
        {
            // Two of three: without a file the leader holds everything it read; with one, what it has synced.
            final long committed = null == file ? Math.max(acked[0], acked[1]) :
                twoOfThree(durableTotal.get(), acked[0], acked[1]);
            if (committed <= echoedTotal)
            {
                return;
            }
            // Positions in `in` count from the oldest byte not yet echoed, which sits at 0.
            view.limit((int)(committed - echoedTotal)).position(0);
            writeFully(client, view);
            echoedTotal = committed;
            in.limit(in.position()).position(view.limit());
            in.compact();
        }
    }

    /**
     * @return the position at least two of three hold: the median of the leader's durable position and the two
     * followers' acknowledged ones.
     */
    static long twoOfThree(final long leader, final long follower0, final long follower1)
    {
        return Math.max(Math.min(follower0, follower1), Math.min(leader, Math.max(follower0, follower1)));
    }

    /**
     * End the process, and with it the client's connection: the run fails, rather than measuring a leader that no
     * longer counts, and the reason is in the output the benchmark shows.
     */
    private static void haltOn(final String reason)
    {
        System.out.println(reason);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    private static void writeFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }
}
