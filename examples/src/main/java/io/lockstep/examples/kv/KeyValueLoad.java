package io.lockstep.examples.kv;

import io.lockstep.cluster.transport.Member;
import io.lockstep.consensus.node.NodeConfig;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/lockstep kv-load --config FILE [--clients N] [--seconds S] [--keys K] [--history FILE]}: clients doing
 * random gets, puts and compare-and-sets against a running cluster of {@link KeyValueService} members, each
 * recording its operations; the history is written as JSON lines (for this project's checker or any standard one)
 * and checked for linearizability. Exit 0 if linearizable and nothing was applied twice.
 */
public final class KeyValueLoad
{
    private KeyValueLoad()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Path config = null;
        int clients = 3;
        int seconds = 10;
        int keys = 3;
        Path historyFile = Path.of("kv-history.jsonl");
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--config" -> config = Path.of(args[i + 1]);
                case "--clients" -> clients = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--keys" -> keys = Integer.parseInt(args[i + 1]);
                case "--history" -> historyFile = Path.of(args[i + 1]);
                default ->
                {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (null == config || clients < 1 || seconds < 1 || keys < 1)
        {
            System.err.println("usage: lockstep kv-load --config FILE [--clients N] [--seconds S] [--keys K] " +
                "[--history FILE]");
            System.exit(2);
        }
        final List<Member> members;
        try
        {
            members = NodeConfig.loadMembers(config, System.getProperties());
        }
        catch (final NodeConfig.ConfigException ex)
        {
            System.err.println("lockstep kv-load: config error: " + ex.getMessage());
            System.exit(2);
            return;
        }
        System.exit(run(members, clients, seconds, keys, historyFile));
    }

    static int run(final List<Member> members, final int clients, final int seconds, final int keys,
        final Path historyFile) throws InterruptedException, IOException
    {
        final List<HistoryOperation> history = Collections.synchronizedList(new ArrayList<>());
        final long[] duplicates = new long[clients];
        final List<Thread> threads = new ArrayList<>();
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (int c = 0; c < clients; c++)
        {
            final int clientId = c;
            final Thread t = new Thread(() ->
            {
                try (KeyValueClient client = new KeyValueClient(clientId, members))
                {
                    if (!client.awaitConnected(10_000))
                    {
                        System.err.println("client " + clientId + " could not open a session in 10 s");
                        return;
                    }
                    final Random random = new Random(clientId);
                    int n = 0;
                    while (System.nanoTime() < end)
                    {
                        final String key = "k" + random.nextInt(keys);
                        final String value = "c" + clientId + "-" + n++;
                        history.add(switch (random.nextInt(3))
                        {
                            case 0 -> client.get(key, 5_000);
                            case 1 -> client.put(key, value, 5_000);
                            default -> client.cas(key, "c" + random.nextInt(clients) + "-" + random.nextInt(n), value,
                                5_000);
                        });
                    }
                    duplicates[clientId] = client.duplicatesSeen();
                }
            }, "kv-load-" + c);
            t.start();
            threads.add(t);
        }
        for (final Thread t : threads)
        {
            t.join();
        }
        long ok = 0;
        long info = 0;
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(historyFile)))
        {
            for (final HistoryOperation op : history)
            {
                out.println(op.toJson());
                ok += "ok".equals(op.status()) ? 1 : 0;
                info += "info".equals(op.status()) ? 1 : 0;
            }
        }
        long applied = 0;
        for (final long d : duplicates)
        {
            applied = Math.max(applied, d);
        }
        final LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
        System.out.printf("kv-load clients=%d operations=%d ok=%d info=%d duplicates_applied=%d linearizable=%s " +
            "history=%s%n", clients, history.size(), ok, info, applied, result.linearizable(), historyFile);
        if (!result.linearizable())
        {
            System.out.println("not linearizable at key " + result.badKey() + ": " + result.detail());
        }
        return result.linearizable() && 0 == applied ? 0 : 1;
    }
}
