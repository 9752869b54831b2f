package io.lockstep.consensus.tool;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.consensus.SnapshotStorage;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.service.ServiceContainer;
import io.lockstep.consensus.service.SessionTable;
import io.lockstep.consensus.service.TimerTable;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import org.agrona.IoUtil;
import org.agrona.concurrent.NoOpIdleStrategy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Offline replay of a member's data directory into a service, for debugging and audit: the newest usable snapshot at
 * or below the target position (or the log from its start), then the log's entries up to the target, applied as a
 * member applies them; the result is the state hash {@code tool status} shows for a member at that position.
 * <p>
 * Nothing is written to the source: the directory is copied to a scratch directory first (recovery may cut a torn
 * tail, and opening snapshots tidies unrecorded files; both happen to the copy), which is deleted afterwards.
 * Without a target, every entry in the log is applied, and the last ones may not have been committed: pass a commit
 * position (from {@code tool status}) to replay only what the cluster agreed on.
 */
public final class LogReplay
{
    /**
     * What a replay reached.
     *
     * @param snapshotPosition position of the snapshot it started from, or -1 if it replayed from the log's start.
     * @param appliedPosition  position after the last entry applied.
     * @param logEnd           position after the last entry in the log.
     * @param stateHash        the state hash there (container and service), as {@code tool status} prints it.
     */
    public record Result(long snapshotPosition, long appliedPosition, long logEnd, long stateHash)
    {
    }

    private LogReplay()
    {
    }

    /**
     * @param dataDir        a member's data directory (holding {@code log/} and {@code snapshots/}).
     * @param serviceFactory makes the service the member ran.
     * @param toPosition     apply entries ending at or before this position; -1 for all.
     * @return what the replay reached.
     * @throws IllegalArgumentException if the target cannot be reached from what the directory holds.
     */
    public static Result replay(final Path dataDir, final Supplier<ClusteredService> serviceFactory,
        final long toPosition)
        throws IOException
    {
        if (!Files.isDirectory(dataDir.resolve("log")))
        {
            throw new IllegalArgumentException(dataDir + " holds no log/ directory: not a member's data directory");
        }
        final Path scratch = Files.createTempDirectory("lockstep-replay");
        try
        {
            copyTree(dataDir, scratch);
            try (ArchiveRaftLog log = new ArchiveRaftLog(ArchiveLogConfig.forExisting(scratch.resolve("log"))
                    .durability(DurabilityPolicy.NONE).backgroundSyncIntervalMs(0));
                FileSnapshotStorage storage = new FileSnapshotStorage(scratch))
            {
                final long target = toPosition < 0 ? log.appendedPosition() : Math.min(toPosition,
                    log.appendedPosition());
                final SnapshotStorage.Loaded loaded = storage.loadLatest();
                final boolean fromSnapshot = null != loaded && loaded.image().logPosition() <= target;
                if (!fromSnapshot && log.startPosition() > 0)
                {
                    throw new IllegalArgumentException("cannot replay to " + target + ": the log starts at " +
                        log.startPosition() + " (purged) and the newest usable snapshot is at " +
                        (null == loaded ? "none" : Long.toString(loaded.image().logPosition())) + "; earlier state " +
                        "is not kept");
                }
                final ClusteredService service = serviceFactory.get();
                final ServiceContainer container = new ServiceContainer(0, service, log,
                    fromSnapshot ? loaded.image().logPosition() : log.startPosition(),
                    new SessionTable(ClusterNode.MAX_SESSIONS, ClusterNode.EGRESS_BUFFER_BYTES),
                    new TimerTable(ClusterNode.MAX_TIMERS), ServiceContainer.Outbox.DISCARD, new NoOpIdleStrategy());
                if (fromSnapshot)
                {
                    container.startFrom(loaded.image());
                }
                else
                {
                    container.start(null);
                }
                while (container.apply(target, 1 << 20) > 0)
                {
                }
                final long hash = container.stateHash() * 31 + service.stateHash();
                container.terminate();
                return new Result(fromSnapshot ? loaded.image().logPosition() : -1, container.appliedPosition(),
                    log.appendedPosition(), hash);
            }
        }
        finally
        {
            IoUtil.delete(scratch.toFile(), false);
        }
    }

    private static void copyTree(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> files = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(target);
                }
                else
                {
                    Files.copy(p, target);
                }
            }
        }
    }
}
