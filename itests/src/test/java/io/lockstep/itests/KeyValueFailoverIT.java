package io.lockstep.itests;

import io.lockstep.consensus.node.ThreadingSettings;
import io.lockstep.consensus.tool.AdminClient;
import io.lockstep.examples.kv.HistoryOperation;
import io.lockstep.examples.kv.KeyValueClient;
import io.lockstep.examples.kv.KeyValueService;
import io.lockstep.examples.kv.LinearizabilityChecker;
import io.lockstep.localcluster.LocalCluster;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three member processes running the key-value service; three clients doing gets, puts and compare-and-sets on a
 * few keys while the leader is killed with SIGKILL. Afterwards no operation was applied twice (the service counts),
 * and the recorded history (written to target/kv-history.jsonl) is linearizable.
 */
class KeyValueFailoverIT
{
    private static final int CLIENTS = 3;

    @TempDir
    Path dir;

    /** Both threading modes: in DEDICATED the service runs on a thread of its own (see ThreadingSettings). */
    @ParameterizedTest(name = "lockstep.threading={0}")
    @ValueSource(strings = { "shared", "dedicated" })
    void historyThroughALeaderKillIsLinearizableAndNothingIsAppliedTwice(final String threading) throws Exception
    {
        final List<HistoryOperation> history = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong duplicates = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        try (LocalCluster cluster = new LocalCluster(dir, 3, "batch", 1 << 20, KeyValueService.class.getName());
            AdminClient admin = cluster.adminClient())
        {
            cluster.configureAll(ThreadingSettings.THREADING, threading);
            for (int i = 0; i < 3; i++)
            {
                cluster.start(i);
            }
            final List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++)
            {
                final int clientId = c;
                final Thread t = new Thread(() ->
                {
                    try (KeyValueClient client = new KeyValueClient(clientId, cluster.members()))
                    {
                        if (!client.awaitConnected(20_000))
                        {
                            failures.incrementAndGet();
                            return;
                        }
                        final Random random = new Random(clientId);
                        int n = 0;
                        while (!stop.get())
                        {
                            final String key = "k" + random.nextInt(3);
                            final String value = "c" + clientId + "-" + n++;
                            final HistoryOperation op = switch (random.nextInt(3))
                            {
                                case 0 -> client.get(key, 10_000);
                                case 1 -> client.put(key, value, 10_000);
                                default -> client.cas(key, "c" + random.nextInt(CLIENTS) + "-" + random.nextInt(n),
                                    value,
                                    10_000);
                            };
                            history.add(op);
                        }
                        duplicates.accumulateAndGet(client.duplicatesSeen(), Math::max);
                    }
                    catch (final RuntimeException ex)
                    {
                        failures.incrementAndGet();
                        ex.printStackTrace();
                    }
                }, "kv-client-" + c);
                t.start();
                threads.add(t);
            }

            awaitOps(history, 300);
            final int leader = admin.awaitLeader(10_000);
            cluster.kill(leader);
            final int before = history.size();
            awaitOps(history, before + 300);
            cluster.start(leader);
            awaitOps(history, history.size() + 200);
            stop.set(true);
            for (final Thread t : threads)
            {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }

        final List<String> lines = new ArrayList<>();
        long ok = 0;
        long info = 0;
        synchronized (history)
        {
            for (final HistoryOperation op : history)
            {
                lines.add(op.toJson());
                ok += "ok".equals(op.status()) ? 1 : 0;
                info += "info".equals(op.status()) ? 1 : 0;
            }
        }
        Files.write(Path.of("target", "shared".equals(threading) ? "kv-history.jsonl" : "kv-history-" + threading
            + ".jsonl"), lines);
        final LinearizabilityChecker.Result result = LinearizabilityChecker.check(history);
        System.out.println("key-value failover (" + threading + "): " + history.size() + " operations (" + ok + " ok, "
            + info +
            " info), duplicates applied " + duplicates.get() + ", linearizable " + result.linearizable() + " (" +
            result.detail() + ")");
        assertEquals(0, failures.get(), "clients ran without errors");
        assertEquals(0, duplicates.get(), "no operation applied twice");
        assertTrue(result.linearizable(), "history not linearizable at key " + result.badKey() + ": "
            + result.detail());
    }

    private static void awaitOps(final List<HistoryOperation> history, final int count)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (history.size() < count)
        {
            assertTrue(System.nanoTime() < deadline, "only " + history.size() + " of " + count + " operations in 60 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
