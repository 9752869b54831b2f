package io.lockstep.consensus.service;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Checks that a service's snapshot is complete: replaying a log from its start must reach the same state as loading
 * a snapshot taken part way and replaying the rest. For service authors' tests (the examples use it): a field left
 * out of {@code onTakeSnapshot}, or loaded in another order, shows up as a different state hash.
 * <p>
 * The log is written through archive-log and the snapshot goes through {@link FileSnapshotStorage}, as on a member.
 */
public final class SnapshotReplayCheck
{
    /**
     * @param hashAtSnapshot      state hash of the replaying container when it took the snapshot.
     * @param hashAfterLoad       state hash right after loading the snapshot.
     * @param fullReplayHash      state hash after replaying the whole log.
     * @param snapshotReplayHash  state hash after loading the snapshot and replaying the rest.
     * @param snapshotPosition    log position of the snapshot.
     * @param snapshotBytes       size of the snapshot image.
     * @param logBytes            size of the log.
     */
    public record Result(
        long hashAtSnapshot,
        long hashAfterLoad,
        long fullReplayHash,
        long snapshotReplayHash,
        long snapshotPosition,
        int snapshotBytes,
        long logBytes)
    {
        /**
         * @return true if loading the snapshot reproduced the state and the rest of the log then led to the same end.
         */
        public boolean matches()
        {
            return hashAtSnapshot == hashAfterLoad && fullReplayHash == snapshotReplayHash;
        }
    }

    private SnapshotReplayCheck()
    {
    }

    /**
     * @param directory      scratch directory for the log and the snapshot (created; left for the caller to remove).
     * @param serviceFactory makes a fresh service.
     * @param messages       client messages, sent from the sessions in turn.
     * @param sessions       client sessions to open first.
     * @param snapshotAfter  the snapshot entry goes after this many messages.
     * @return the hashes to compare.
     */
    public static Result check(
        final Path directory,
        final Supplier<ClusteredService> serviceFactory,
        final List<byte[]> messages,
        final int sessions,
        final int snapshotAfter)
    {
        final ArchiveRaftLog log = new ArchiveRaftLog(new ArchiveLogConfig().directory(directory.resolve("log"))
            .durability(DurabilityPolicy.NONE).segmentLength(64 * 1024 * 1024));
        try
        {
            writeLog(log, messages, sessions, snapshotAfter);

            final long[] atSnapshot = new long[1];
            final SnapshotImage[] taken = new SnapshotImage[1];
            final ClusteredService full = serviceFactory.get();
            final ServiceContainer fullContainer = container(full, log, log.startPosition());
            fullContainer.onSnapshotTaken((image, pauseNs) ->
            {
                taken[0] = image;
                atSnapshot[0] = hash(fullContainer, full);
            }, () -> 0);
            fullContainer.start(null);
            applyAll(fullContainer, log);
            if (null == taken[0])
            {
                throw new IllegalStateException("no snapshot was taken");
            }

            final SnapshotImage loaded;
            try (FileSnapshotStorage storage = new FileSnapshotStorage(directory))
            {
                storage.write(taken[0]);
                // Real files and a background writer: this check runs outside any member, on the wall clock.
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (storage.durablePosition() != taken[0].logPosition())
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new IllegalStateException("snapshot not durable within 60 s");
                    }
                    storage.isWriting();
                    Thread.onSpinWait();
                }
                final SnapshotStorage.Loaded fromDisk = storage.loadLatest();
                loaded = fromDisk.image();
            }

            final ClusteredService resumed = serviceFactory.get();
            final ServiceContainer resumedContainer = container(resumed, log, loaded.logPosition());
            resumedContainer.startFrom(loaded);
            final long afterLoad = hash(resumedContainer, resumed);
            applyAll(resumedContainer, log);
            return new Result(atSnapshot[0], afterLoad, hash(fullContainer, full), hash(resumedContainer, resumed),
                loaded.logPosition(), loaded.encodedLength(), log.appendedPosition());
        }
        finally
        {
            log.close();
        }
    }

    private static ServiceContainer container(
        final ClusteredService service, final ArchiveRaftLog log, final long startPosition)
    {
        return new ServiceContainer(0, service, log, startPosition, new SessionTable(1024, 64 * 1024),
            new TimerTable(64 * 1024), ServiceContainer.Outbox.DISCARD, new NoOpIdleStrategy());
    }

    private static long hash(final ServiceContainer container, final ClusteredService service)
    {
        return container.stateHash() * 31 + service.stateHash();
    }

    private static void applyAll(final ServiceContainer container, final ArchiveRaftLog log)
    {
        while (container.apply(log.appendedPosition(), 1 << 20) > 0)
        {
        }
    }

    private static void writeLog(
        final ArchiveRaftLog log, final List<byte[]> messages, final int sessions, final int snapshotAfter)
    {
        final EntryLogWriter writer = new EntryLogWriter(log, 1);
        final UnsafeBuffer payload = new UnsafeBuffer(0, 0);
        for (int s = 0; s < sessions; s++)
        {
            writer.sessionOpen(s);
        }
        final long[] sequences = new long[sessions];
        for (int i = 0; i <= messages.size(); i++)
        {
            if (i == snapshotAfter)
            {
                writer.snapshotAction();
            }
            if (i == messages.size())
            {
                break;
            }
            final int session = i % sessions;
            payload.wrap(messages.get(i));
            writer.sessionMessage(session + 1, sequences[session]++, payload, 0, payload.capacity());
        }
        writer.flush();
    }
}
