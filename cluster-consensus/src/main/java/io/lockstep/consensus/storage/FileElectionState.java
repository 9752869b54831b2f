package io.lockstep.consensus.storage;

import io.lockstep.archive.ArchiveException;
import io.lockstep.archive.AtomicFile;
import io.lockstep.archive.NoSpace;
import io.lockstep.consensus.ClusterIdentity;
import io.lockstep.consensus.ElectionStateStore;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ElectionStateDecoder;
import io.lockstep.consensus.codecs.ElectionStateEncoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Term, vote, membership epoch and cluster identity in the file {@code election.state}: an SBE
 * {@code ElectionState} and a CRC32C, replaced atomically (temporary file, fsync, rename, directory fsync) on every
 * change, so a crash leaves the old state or the new one.
 * Elections are rare, so an fsync each is cheap; answering before it would break election safety.
 */
public final class FileElectionState implements ElectionStateStore
{
    /** Name of the file in a member's data directory. */
    public static final String FILE_NAME = "election.state";
    private static final int LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + ElectionStateEncoder.BLOCK_LENGTH;
    /** A file written before membership epochs (schema version 2): term and vote only, read as epoch 0. */
    private static final int LENGTH_BEFORE_EPOCHS = MessageHeaderEncoder.ENCODED_LENGTH + Long.BYTES + Integer.BYTES;
    /** A file written before cluster identities (schema version 3): read as a member of a cluster already formed. */
    private static final int LENGTH_BEFORE_IDENTITY = LENGTH_BEFORE_EPOCHS + 4 * Long.BYTES;

    private final Path file;
    /** The file was there when the member started (a member that ever held a term has one). */
    private final boolean existed;
    private long term;
    private int votedFor = NO_VOTE;
    private long configEpoch;
    private long configVersion;
    private long voters;
    private long learners;
    private ClusterIdentity identity = ClusterIdentity.NONE;
    private SpaceReserve reserve;
    /** The file was written before cluster identities: its member is read as one that took part. */
    private boolean fromOlderVersion;

    /**
     * @param directory the member's data directory.
     * @throws IllegalStateException naming the file if it exists but is damaged.
     */
    public FileElectionState(final Path directory)
    {
        this.file = directory.resolve(FILE_NAME);
        final byte[] bytes = AtomicFile.readOrNull(file);
        existed = null != bytes;
        if (null != bytes)
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
            final int length = bytes.length - Integer.BYTES;
            if ((length != LENGTH && length != LENGTH_BEFORE_EPOCHS && length != LENGTH_BEFORE_IDENTITY) ||
                buffer.getInt(length, ByteOrder.LITTLE_ENDIAN) != checksum(bytes, length))
            {
                throw new IllegalStateException(file + " is damaged (length " + bytes.length +
                    " or checksum wrong): the member cannot know its term and vote, so it will not start");
            }
            final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
            final ElectionStateDecoder decoder = new ElectionStateDecoder().wrap(
                buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            term = decoder.term();
            votedFor = decoder.votedFor();
            if (LENGTH_BEFORE_EPOCHS != length)
            {
                configEpoch = decoder.configEpoch();
                configVersion = decoder.configVersion();
                voters = decoder.voters();
                learners = decoder.learners();
            }
            fromOlderVersion = LENGTH != length;
            identity = LENGTH == length ? new ClusterIdentity(decoder.clusterIdHigh(), decoder.clusterIdLow(),
                BooleanType.TRUE == decoder.mayElect(), BooleanType.TRUE == decoder.identitySealed()) :
                ClusterIdentity.FORMED_BEFORE_IDENTITIES;
        }
    }

    /**
     * @return true if the file was written by a version before cluster identities (and not rewritten since).
     */
    public boolean fromOlderVersion()
    {
        return fromOlderVersion;
    }

    /**
     * Hold back a little space in the data directory ({@link SpaceReserve}), so that on a full disk this member can
     * still record a new term or vote: a member's process does this; a tool reading the file does not.
     *
     * @return this.
     */
    public FileElectionState reserveSpace()
    {
        reserve = new SpaceReserve(file.getParent());
        reserve.take();
        return this;
    }

    /**
     * @return true if {@code election.state} was there at start: false for a new member, and for a data directory
     * that lost it.
     */
    public boolean existed()
    {
        return existed;
    }

    public long term()
    {
        return term;
    }

    public int votedFor()
    {
        return votedFor;
    }

    public long configEpoch()
    {
        return configEpoch;
    }

    public long configVersion()
    {
        return configVersion;
    }

    public long voters()
    {
        return voters;
    }

    public long learners()
    {
        return learners;
    }

    public ClusterIdentity identity()
    {
        return identity;
    }

    public void save(final long term, final int votedFor)
    {
        write(term, votedFor, configEpoch, configVersion, voters, learners, identity);
    }

    public void saveMembership(final long configEpoch, final long configVersion, final long voters,
        final long learners)
    {
        write(term, votedFor, configEpoch, configVersion, voters, learners, identity);
    }

    public void saveIdentity(final ClusterIdentity identity)
    {
        write(term, votedFor, configEpoch, configVersion, voters, learners, identity);
    }

    private void write(
        final long term, final int votedFor, final long configEpoch, final long configVersion, final long voters,
        final long learners, final ClusterIdentity identity)
    {
        final byte[] bytes = new byte[LENGTH + Integer.BYTES];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        new ElectionStateEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .term(term)
            .votedFor(votedFor)
            .configEpoch(configEpoch)
            .voters(voters)
            .learners(learners)
            .configVersion(configVersion)
            .clusterIdHigh(identity.high())
            .clusterIdLow(identity.low())
            .mayElect(identity.mayElect() ? BooleanType.TRUE : BooleanType.FALSE)
            .identitySealed(identity.sealed() ? BooleanType.TRUE : BooleanType.FALSE);
        buffer.putInt(LENGTH, checksum(bytes, LENGTH), ByteOrder.LITTLE_ENDIAN);
        try
        {
            AtomicFile.write(file, ByteBuffer.wrap(bytes));
        }
        catch (final ArchiveException ex)
        {
            if (null == reserve || !NoSpace.is(ex))
            {
                throw ex;
            }
            // A full disk: the reserve makes room for this one small file, and is taken again after.
            reserve.release();
            AtomicFile.write(file, ByteBuffer.wrap(bytes));
            reserve.take();
        }
        this.term = term;
        this.votedFor = votedFor;
        this.configEpoch = configEpoch;
        this.configVersion = configVersion;
        this.voters = voters;
        this.learners = learners;
        this.identity = identity;
    }

    private static int checksum(final byte[] bytes, final int length)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int)crc.getValue();
    }
}
