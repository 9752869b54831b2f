package io.lockstep.simulation;

import io.lockstep.archive.ArchiveException;
import io.lockstep.consensus.SnapshotImage;
import io.lockstep.consensus.SnapshotStorage;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

/**
 * Snapshots in memory with crash semantics: a write takes a few simulation steps ({@link #tick}) and a crash before
 * it finishes loses it; what finished survives. Stored form: position, term, timestamp, fragment bytes, CRC, so
 * that damage injected with {@link #corruptNewest} is caught on load, as the file store catches it.
 */
final class SimSnapshotStorage implements SnapshotStorage
{
    private record Stored(long position, long term, byte[] bytes)
    {
    }

    private final List<Stored> stored;
    private final Random random;
    private SnapshotImage writing;
    private int writeStepsLeft;
    private ExpandableArrayBuffer install;
    private long installPosition;
    private long installTerm;
    private int installLength;
    int loadFallbacks;
    int installsCompleted;
    /** The disk is full: a snapshot being written is abandoned when it would finish (nothing is recorded). */
    private boolean diskFull;
    private String writeProblem;

    SimSnapshotStorage(final Random random)
    {
        this(random, new ArrayList<>());
    }

    private SimSnapshotStorage(final Random random, final List<Stored> stored)
    {
        this.random = random;
        this.stored = stored;
    }

    /**
     * @return what a restarted member finds: finished snapshots only.
     */
    SimSnapshotStorage afterCrash()
    {
        final SimSnapshotStorage recovered = new SimSnapshotStorage(random, new ArrayList<>(stored));
        recovered.diskFull = diskFull;
        return recovered;
    }

    /** A full disk, or space again. */
    void diskFull(final boolean full)
    {
        this.diskFull = full;
    }

    @Override
    public String writeProblem()
    {
        return writeProblem;
    }

    /**
     * Flip a byte of the newest snapshot, as bit rot on disk would, if the one before it still joins the member's
     * log (a member whose only joinable snapshot rots refuses to start: see ConsensusAgent.startFromSnapshot).
     */
    void corruptNewest(final long logStartPosition)
    {
        if (stored.size() > 1 && stored.get(stored.size() - 2).position >= logStartPosition)
        {
            final byte[] bytes = stored.get(stored.size() - 1).bytes;
            bytes[random.nextInt(bytes.length)] ^= 0x10;
        }
    }

    /**
     * The store's rule ({@link SnapshotStorage#completeInstall}): the newest recorded snapshot is the one a restart
     * loads, so snapshots are recorded in log order, each position once. Checked here on every record, writes
     * included, so that every simulation holds the consensus module to it.
     */
    private void recordInLogOrder(final long position)
    {
        if (position <= durablePosition())
        {
            throw new IllegalStateException("snapshot at " + position + " recorded after one at " +
                durablePosition() + ": snapshots are recorded in log order only");
        }
    }

    int count()
    {
        return stored.size();
    }

    /** One simulation step of background writing. */
    void tick()
    {
        if (null != writing && --writeStepsLeft <= 0)
        {
            if (diskFull)
            {
                writeProblem = "simulated full disk: snapshot at " + writing.logPosition() + " not written";
            }
            else
            {
                recordInLogOrder(writing.logPosition());
                stored.add(new Stored(writing.logPosition(), writing.term(), encode(writing)));
                writeProblem = null;
            }
            writing = null;
        }
    }

    public boolean isWriting()
    {
        return null != writing;
    }

    public void write(final SnapshotImage image)
    {
        if (null != writing)
        {
            throw new IllegalStateException("a snapshot write is already under way");
        }
        writing = image;
        writeStepsLeft = 1 + random.nextInt(20);
    }

    public long durablePosition()
    {
        return stored.isEmpty() ? -1 : stored.get(stored.size() - 1).position;
    }

    public long durableTerm()
    {
        return stored.isEmpty() ? 0 : stored.get(stored.size() - 1).term;
    }

    public long durableLength()
    {
        return stored.isEmpty() ? 0 : stored.get(stored.size() - 1).bytes.length;
    }

    public Loaded loadLatest()
    {
        for (int i = stored.size() - 1; i >= 0; i--)
        {
            final SnapshotImage image = decode(stored.get(i).bytes);
            if (null != image)
            {
                return new Loaded(image, "sim snapshot at " + image.logPosition());
            }
            // Out of the set that retention counts, as the file store sets a damaged file aside.
            stored.remove(i);
            loadFallbacks++;
        }
        return null;
    }

    public int read(
        final long logPosition, final long offset, final MutableDirectBuffer dst, final int dstOffset,
            final int maxLength)
    {
        for (final Stored s : stored)
        {
            if (s.position == logPosition)
            {
                final int length = (int)Math.min(maxLength, s.bytes.length - offset);
                dst.putBytes(dstOffset, s.bytes, (int)offset, length);
                return length;
            }
        }
        return -1;
    }

    public void beginInstall(final long logPosition, final long term, final long totalLength)
    {
        install = new ExpandableArrayBuffer((int)totalLength + 1);
        installPosition = logPosition;
        installTerm = term;
        installLength = 0;
    }

    public void installChunk(final DirectBuffer buffer, final int offset, final int length)
    {
        install.putBytes(installLength, buffer, offset, length);
        installLength += length;
    }

    public Loaded completeInstall()
    {
        final byte[] bytes = new byte[installLength];
        install.getBytes(0, bytes);
        install = null;
        final SnapshotImage image = decode(bytes);
        if (null == image || image.logPosition() != installPosition || image.term() != installTerm)
        {
            throw new ArchiveException(ArchiveException.Reason.CORRUPT_SNAPSHOT, null, 0, "installed snapshot damaged");
        }
        recordInLogOrder(installPosition);
        stored.add(new Stored(installPosition, installTerm, bytes));
        installsCompleted++;
        return new Loaded(image, "installed sim snapshot at " + installPosition);
    }

    public long retain(final int keep)
    {
        while (stored.size() > keep)
        {
            stored.remove(0);
        }
        return stored.isEmpty() ? -1 : stored.get(0).position;
    }

    public void close()
    {
    }

    static byte[] encode(final SnapshotImage image)
    {
        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(image.encodedLength() + 64);
        out.putLong(0, image.logPosition());
        out.putLong(8, image.term());
        out.putLong(16, image.timestamp());
        final int[] length = { 24 };
        image.forEachFragment((buffer, offset, fragmentLength) ->
        {
            out.putInt(length[0], fragmentLength);
            out.putBytes(length[0] + 4, buffer, offset, fragmentLength);
            length[0] += 4 + fragmentLength;
        });
        final CRC32C crc = new CRC32C();
        crc.update(out.byteArray(), 0, length[0]);
        out.putInt(length[0], (int)crc.getValue());
        final byte[] bytes = new byte[length[0] + 4];
        out.getBytes(0, bytes);
        return bytes;
    }

    static SnapshotImage decode(final byte[] bytes)
    {
        final UnsafeBuffer in = new UnsafeBuffer(bytes);
        final int end = bytes.length - 4;
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, end);
        if (end < 24 || in.getInt(end) != (int)crc.getValue())
        {
            return null;
        }
        final SnapshotImage image = new SnapshotImage(in.getLong(0), in.getLong(8), in.getLong(16), end);
        for (int o = 24; o < end; )
        {
            final int length = in.getInt(o);
            image.append(in, o + 4, length);
            o += 4 + length;
        }
        return image;
    }
}
