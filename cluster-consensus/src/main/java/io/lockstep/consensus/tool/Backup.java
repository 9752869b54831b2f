package io.lockstep.consensus.tool;

import io.lockstep.archive.ArchiveLogConfig;
import io.lockstep.archive.DurabilityPolicy;
import io.lockstep.consensus.ClusterIdentity;
import io.lockstep.consensus.ElectionStateStore;
import io.lockstep.consensus.RaftLog;
import io.lockstep.consensus.codecs.BackupStatus;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.node.NodeConfig;
import io.lockstep.consensus.storage.ArchiveRaftLog;
import io.lockstep.consensus.storage.FileElectionState;
import io.lockstep.consensus.storage.FileSnapshotStorage;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * {@code tool backup DIR}: a consistent copy of a live member's newest durable snapshot and its committed log after
 * it, pulled over the network piece by piece and written as a member data directory (the same layout a member
 * writes: {@code snapshots/}, {@code log/}, {@code election.state}). The state it holds is the cluster's at the
 * commit position when the backup began: the snapshot plus every committed entry after it.
 * <p>
 * Restore: copy DIR to a member's {@code lockstep.data.dir} and start it. Into every member of a new cluster (same
 * segment length), it starts the cluster from that state; into one member of a running cluster (its own directory
 * moved away), it is a head start the leader tops up. If the member drops the snapshot while it is being copied
 * (a newer one replaced it), the backup starts again, at most three times.
 */
final class Backup
{
    private static final long PIECE_TIMEOUT_MS = 5_000;
    private static final int ATTEMPTS = 3;

    /** The snapshot the backup was pulling is gone from the member: start again. */
    private static final class Gone extends Exception
    {
        private static final long serialVersionUID = 1L;
    }

    private final AdminClient client;
    private final NodeConfig config;
    private final PrintStream out;
    private final PrintStream err;
    private long bytes;

    Backup(final AdminClient client, final NodeConfig config, final PrintStream out, final PrintStream err)
    {
        this.client = client;
        this.config = config;
        this.out = out;
        this.err = err;
    }

    /**
     * @param dir      where to write (must not exist, or be empty).
     * @param memberId the member to copy, or -1 for the leader.
     * @return exit code: 0 done, 1 the cluster did not answer or could not give a consistent copy, 2 bad target.
     */
    int run(final Path dir, final int memberId) throws IOException
    {
        if (Files.exists(dir))
        {
            try (Stream<Path> entries = Files.list(dir))
            {
                if (entries.findAny().isPresent())
                {
                    err.println("lockstep tool: backup directory " + dir + " is not empty");
                    return 2;
                }
            }
        }
        final int source = memberId >= 0 ? memberId : leaderOrAny();
        if (source < 0)
        {
            err.println("lockstep tool: no member answered: nothing to back up");
            return 1;
        }
        final long start = System.nanoTime();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++)
        {
            IoUtil.delete(dir.toFile(), true);
            Files.createDirectories(dir);
            bytes = 0;
            try
            {
                return copy(dir, source, start);
            }
            catch (final Gone ex)
            {
                err.println("lockstep tool: member " + source + " replaced its snapshot during the backup; " +
                    "starting again (" + attempt + " of " + ATTEMPTS + ")");
            }
        }
        err.println("lockstep tool: member " + source + " kept replacing its snapshot; no consistent copy made");
        return 1;
    }

    private int leaderOrAny()
    {
        int any = -1;
        for (final AdminClient.Status s : client.status(2000).values())
        {
            if (Role.LEADER == s.role())
            {
                return s.memberId();
            }
            any = s.memberId();
        }
        return any;
    }

    private int copy(final Path dir, final int source, final long start) throws Gone
    {
        final AdminClient.BackupPiece first = piece(source, false, -1, 0, 0);
        if (null == first)
        {
            err.println("lockstep tool: member " + source + " did not answer");
            return 1;
        }
        final long commitEnd = first.commitPosition();
        long snapshotPosition = 0;
        long snapshotTerm = 0;
        if (BackupStatus.NO_SNAPSHOT == first.status())
        {
            if (first.logStartPosition() > 0)
            {
                err.println("lockstep tool: member " + source + " has no snapshot and its log starts at " +
                    first.logStartPosition() + ": take one first (tool snapshot)");
                return 1;
            }
        }
        else
        {
            snapshotPosition = first.snapshotPosition();
            snapshotTerm = first.snapshotTerm();
            copySnapshot(dir, source, first);
        }
        final long lastTerm = copyLog(dir, source, snapshotPosition, snapshotTerm, commitEnd);
        // The member this is restored into may have voted, before its data was replaced, in any term the cluster
        // reached: the newest term any member reports, with the vote unknown, so it never votes twice in one.
        long clusterTerm = lastTerm;
        for (final AdminClient.Status s : client.status(2000).values())
        {
            clusterTerm = Math.max(clusterTerm, s.term());
        }
        // A backup holds what the cluster had committed when it was taken: restored into every member of a cluster,
        // they vote with it and elect from it. It carries no identity: the first leader makes a new one.
        final FileElectionState restored = new FileElectionState(dir);
        restored.saveIdentity(ClusterIdentity.FORMED_BEFORE_IDENTITIES);
        restored.save(clusterTerm, ElectionStateStore.VOTE_UNKNOWN);
        out.printf("backup member=%d dir=%s snapshot_position=%d log_end=%d term=%d bytes=%d elapsed_ms=%d%n",
            source, dir, BackupStatus.NO_SNAPSHOT == first.status() ? -1 : snapshotPosition, commitEnd, clusterTerm,
            bytes, (System.nanoTime() - start) / 1_000_000);
        return 0;
    }

    private void copySnapshot(final Path dir, final int source, final AdminClient.BackupPiece first) throws Gone
    {
        try (FileSnapshotStorage storage = new FileSnapshotStorage(dir))
        {
            storage.beginInstall(first.snapshotPosition(), first.snapshotTerm(), first.snapshotLength());
            AdminClient.BackupPiece piece = first;
            long offset = 0;
            while (true)
            {
                checkGone(piece);
                storage.installChunk(new UnsafeBuffer(piece.bytes()), 0, piece.bytes().length);
                bytes += piece.bytes().length;
                offset = piece.endPosition();
                if (offset >= first.snapshotLength())
                {
                    break;
                }
                if (0 == piece.bytes().length)
                {
                    throw new IllegalStateException("member " + source + " sent no snapshot bytes at offset " + offset);
                }
                piece = piece(source, false, first.snapshotPosition(), offset, 0);
            }
            storage.completeInstall();
        }
    }

    private long copyLog(
        final Path dir, final int source, final long from, final long fromTerm, final long commitEnd) throws Gone
    {
        final ArchiveLogConfig logConfig = new ArchiveLogConfig().directory(dir.resolve("log"))
            .segmentLength(config.segmentLength()).maxBatchLength(config.maxBatchLength())
            .durability(DurabilityPolicy.BATCH);
        try (ArchiveRaftLog log = new ArchiveRaftLog(logConfig))
        {
            if (from > 0)
            {
                log.reset(from, fromTerm);
            }
            long position = from;
            while (position < commitEnd)
            {
                final AdminClient.BackupPiece piece = piece(source, true, -1, position, commitEnd);
                checkGone(piece);
                if (piece.endPosition() <= position)
                {
                    throw new IllegalStateException("member " + source + " sent no log at position " + position);
                }
                final UnsafeBuffer frames = new UnsafeBuffer(piece.bytes());
                while (RaftLog.BACK_PRESSURED == log.appendFrames(frames, 0, frames.capacity()))
                {
                    log.flush();
                }
                bytes += piece.bytes().length;
                position = piece.endPosition();
            }
            log.flush();
            final long[] lastTerm = { fromTerm };
            log.scan((framePosition, term, type, buffer, offset) -> lastTerm[0] = Math.max(lastTerm[0], term));
            return lastTerm[0];
        }
    }

    private AdminClient.BackupPiece piece(
        final int source, final boolean logPart, final long snapshotPosition, final long from, final long limit)
    {
        final AdminClient.BackupPiece piece = client.backupPiece(source, logPart, snapshotPosition, from, limit,
            PIECE_TIMEOUT_MS);
        if (null == piece)
        {
            throw new IllegalStateException("member " + source + " stopped answering during the backup");
        }
        return piece;
    }

    private static void checkGone(final AdminClient.BackupPiece piece) throws Gone
    {
        if (BackupStatus.GONE == piece.status())
        {
            throw new Gone();
        }
    }
}
