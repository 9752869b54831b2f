package io.lockstep.archive;

import io.lockstep.archive.codecs.MessageHeaderDecoder;
import io.lockstep.archive.codecs.MessageHeaderEncoder;
import io.lockstep.archive.codecs.RecordingLogEntryDecoder;
import io.lockstep.archive.codecs.RecordingLogEntryEncoder;
import io.lockstep.archive.codecs.RecordingLogHeaderDecoder;
import io.lockstep.archive.codecs.RecordingLogHeaderEncoder;
import io.lockstep.archive.codecs.RecordingType;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static io.lockstep.archive.ArchiveException.Reason.CORRUPT_RECORDING_LOG;
import static io.lockstep.archive.ArchiveException.Reason.UNSUPPORTED_FORMAT;

/**
 * The small file that says where each leadership term starts in the log and which snapshots exist. Every change
 * rewrites the whole file atomically (temporary file, fsync, rename, fsync of the directory), so a crash at any byte
 * leaves the old content or the new, never a mix. Layout: SBE {@code RecordingLogHeader}, then one
 * {@code RecordingLogEntry} per record, then a CRC32C of everything before it.
 * <p>
 * Control path only: used on elections and snapshots, not per message. Not thread safe.
 */
public final class RecordingLog
{
    /** Name of the recording log file in a member's directory. */
    public static final String FILE_NAME = "recording.log";
    /** Bound on records: one per term and per snapshot kept; far beyond any real cluster's life. */
    public static final int MAX_ENTRIES = 1_000_000;
    /** Bound on a snapshot location's length (a file name). */
    public static final int MAX_LOCATION_LENGTH = 255;

    /**
     * One record.
     *
     * @param type           term or snapshot.
     * @param term           the leadership term.
     * @param position       where the term starts in the log, or the log position a snapshot covers.
     * @param leaderMemberId leader of the term (terms only; -1 for snapshots).
     * @param timestamp      log time of the term start or snapshot.
     * @param serviceId      service the snapshot belongs to (snapshots only; -1 for terms).
     * @param location       snapshot location in the snapshot store (snapshots only; empty for terms).
     */
    public record Entry(
        RecordingType type, long term, long position, int leaderMemberId, long timestamp, int serviceId,
            String location)
    {
    }

    private final Path file;
    private final List<Entry> entries;

    private RecordingLog(final Path file, final List<Entry> entries)
    {
        this.file = file;
        this.entries = entries;
    }

    /**
     * Load the recording log in a directory; an absent file is an empty log.
     *
     * @param directory holding the file.
     * @return the loaded log.
     * @throws ArchiveException with {@code CORRUPT_RECORDING_LOG} if the file fails its checksum or cannot be
     *                          parsed, or {@code UNSUPPORTED_FORMAT} if a newer version wrote it.
     */
    public static RecordingLog open(final Path directory)
    {
        final Path file = directory.resolve(FILE_NAME);
        final byte[] bytes = AtomicFile.readOrNull(file);
        return new RecordingLog(file, null == bytes ? new ArrayList<>() : decode(file, bytes));
    }

    /**
     * @return every record, oldest first.
     */
    public List<Entry> entries()
    {
        return Collections.unmodifiableList(entries);
    }

    /**
     * Record that a term starts at a position. Terms only go up, and so do their base positions.
     *
     * @param term           the new term.
     * @param basePosition   log position of the term's first frame.
     * @param leaderMemberId leader of the term.
     * @param timestamp      log time at the start of the term.
     */
    public void appendTerm(final long term, final long basePosition, final int leaderMemberId, final long timestamp)
    {
        final Entry last = lastTerm();
        if (null != last && (term <= last.term() || basePosition < last.position()))
        {
            throw new IllegalArgumentException("term " + term + " at " + basePosition + " does not follow term " +
                last.term() + " at " + last.position());
        }
        add(new Entry(RecordingType.TERM, term, basePosition, leaderMemberId, timestamp, -1, ""));
    }

    /**
     * Record a snapshot that is complete and durable in the snapshot store.
     *
     * @param term      term at the snapshot's position.
     * @param position  log position the snapshot covers.
     * @param serviceId service the snapshot belongs to.
     * @param timestamp log time at the snapshot.
     * @param location  where the snapshot store keeps it.
     */
    public void appendSnapshot(
        final long term, final long position, final int serviceId, final long timestamp, final String location)
    {
        if (location.isEmpty() || location.length() > MAX_LOCATION_LENGTH)
        {
            throw new IllegalArgumentException("snapshot location length must be in [1, " + MAX_LOCATION_LENGTH + "]");
        }
        add(new Entry(RecordingType.SNAPSHOT, term, position, -1, timestamp, serviceId, location));
    }

    /**
     * @return the last term record, or null.
     */
    public Entry lastTerm()
    {
        for (int i = entries.size() - 1; i >= 0; i--)
        {
            if (RecordingType.TERM == entries.get(i).type())
            {
                return entries.get(i);
            }
        }
        return null;
    }

    /**
     * @param position a log position.
     * @return the term record of the term the position falls in (the last one starting at or before it), or null.
     */
    public Entry termAt(final long position)
    {
        Entry found = null;
        for (final Entry entry : entries)
        {
            if (RecordingType.TERM == entry.type() && entry.position() <= position)
            {
                found = entry;
            }
        }
        return found;
    }

    /**
     * @param serviceId a service.
     * @return its snapshot with the highest log position, or null.
     */
    public Entry latestSnapshot(final int serviceId)
    {
        Entry found = null;
        for (final Entry entry : entries)
        {
            if (RecordingType.SNAPSHOT == entry.type() && entry.serviceId() == serviceId &&
                (null == found || entry.position() >= found.position()))
            {
                found = entry;
            }
        }
        return found;
    }

    /**
     * Forget a snapshot (its file is being deleted): the record goes first, so a crash never leaves a record
     * naming a missing file.
     *
     * @param location the snapshot's location.
     * @return true if a record named it.
     */
    public boolean removeSnapshot(final String location)
    {
        final List<Entry> kept = new ArrayList<>(entries.size());
        for (final Entry entry : entries)
        {
            if (RecordingType.SNAPSHOT != entry.type() || !entry.location().equals(location))
            {
                kept.add(entry);
            }
        }
        if (kept.size() == entries.size())
        {
            return false;
        }
        AtomicFile.write(file, encode(kept));
        entries.clear();
        entries.addAll(kept);
        return true;
    }

    private void add(final Entry entry)
    {
        if (entries.size() >= MAX_ENTRIES)
        {
            throw new IllegalStateException("recording log is full: " + MAX_ENTRIES + " entries");
        }
        entries.add(entry);
        try
        {
            AtomicFile.write(file, encode(entries));
        }
        catch (final RuntimeException ex)
        {
            entries.remove(entries.size() - 1);
            throw ex;
        }
    }

    private static ByteBuffer encode(final List<Entry> entries)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);
        final MessageHeaderEncoder header = new MessageHeaderEncoder();
        final RecordingLogHeaderEncoder logHeader = new RecordingLogHeaderEncoder();
        final RecordingLogEntryEncoder entryEncoder = new RecordingLogEntryEncoder();
        logHeader.wrapAndApplyHeader(buffer, 0, header)
            .formatVersion(LogFormat.FORMAT_VERSION)
            .entryCount(entries.size());
        int offset = MessageHeaderEncoder.ENCODED_LENGTH + logHeader.encodedLength();
        for (final Entry entry : entries)
        {
            entryEncoder.wrapAndApplyHeader(buffer, offset, header)
                .recordType(entry.type())
                .leaderMemberId(entry.leaderMemberId())
                .term(entry.term())
                .position(entry.position())
                .timestamp(entry.timestamp())
                .serviceId(entry.serviceId())
                .location(entry.location());
            offset += MessageHeaderEncoder.ENCODED_LENGTH + entryEncoder.encodedLength();
        }
        final UnsafeBuffer view = new UnsafeBuffer(buffer.byteArray(), 0, offset + Integer.BYTES);
        view.putInt(offset, new FrameChecksum().computeRange(view, 0, offset), ByteOrder.LITTLE_ENDIAN);
        return ByteBuffer.wrap(buffer.byteArray(), 0, offset + Integer.BYTES);
    }

    private static List<Entry> decode(final Path file, final byte[] bytes)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final int headerLength = MessageHeaderDecoder.ENCODED_LENGTH + RecordingLogHeaderDecoder.BLOCK_LENGTH;
        if (bytes.length < headerLength + Integer.BYTES)
        {
            throw new ArchiveException(CORRUPT_RECORDING_LOG, file, -1, "file too short: " + bytes.length + " bytes");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        if (header.schemaId() != RecordingLogHeaderDecoder.SCHEMA_ID ||
            header.templateId() != RecordingLogHeaderDecoder.TEMPLATE_ID)
        {
            throw new ArchiveException(CORRUPT_RECORDING_LOG, file, 0, "not a recording log (schemaId=" +
                header.schemaId() + " templateId=" + header.templateId() + ")");
        }
        final RecordingLogHeaderDecoder logHeader = new RecordingLogHeaderDecoder()
            .wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        if (logHeader.formatVersion() > LogFormat.FORMAT_VERSION)
        {
            throw new ArchiveException(UNSUPPORTED_FORMAT, file, -1, "recording log written by format version " +
                logHeader.formatVersion() + "; this build reads up to " + LogFormat.FORMAT_VERSION);
        }
        final int crcOffset = bytes.length - Integer.BYTES;
        final int storedCrc = buffer.getInt(crcOffset, ByteOrder.LITTLE_ENDIAN);
        if (storedCrc != new FrameChecksum().computeRange(buffer, 0, crcOffset))
        {
            throw new ArchiveException(CORRUPT_RECORDING_LOG, file, -1, "checksum mismatch over " + crcOffset +
                " bytes: the file was damaged after it was written");
        }

        final int count = logHeader.entryCount();
        if (count < 0 || count > MAX_ENTRIES)
        {
            throw new ArchiveException(CORRUPT_RECORDING_LOG, file, -1, "entry count out of range: " + count);
        }
        final List<Entry> entries = new ArrayList<>(count);
        final RecordingLogEntryDecoder decoder = new RecordingLogEntryDecoder();
        int offset = MessageHeaderDecoder.ENCODED_LENGTH + header.blockLength();
        for (int i = 0; i < count; i++)
        {
            if (offset + MessageHeaderDecoder.ENCODED_LENGTH + RecordingLogEntryDecoder.BLOCK_LENGTH > crcOffset)
            {
                throw new ArchiveException(CORRUPT_RECORDING_LOG, file, offset, "entry " + i + " runs past the end");
            }
            header.wrap(buffer, offset);
            decoder.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            final RecordingType type = decoder.recordType();
            if (RecordingType.NULL_VAL == type)
            {
                throw new ArchiveException(CORRUPT_RECORDING_LOG, file, offset, "entry " + i + " has unknown type");
            }
            entries.add(new Entry(type, decoder.term(), decoder.position(), decoder.leaderMemberId(),
                decoder.timestamp(), decoder.serviceId(), decoder.location()));
            offset += MessageHeaderDecoder.ENCODED_LENGTH + decoder.encodedLength();
        }
        if (offset != crcOffset)
        {
            throw new ArchiveException(CORRUPT_RECORDING_LOG, file, offset, "trailing bytes after " + count
                + " entries");
        }
        return entries;
    }
}
