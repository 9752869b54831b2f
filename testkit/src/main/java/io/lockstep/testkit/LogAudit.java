package io.lockstep.testkit;

import io.lockstep.archive.ArchiveLog;
import io.lockstep.archive.FrameDescriptor;
import io.lockstep.consensus.LogEntryType;
import org.agrona.collections.Long2LongHashMap;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a member's log from disk (read-only, every frame checked) and accounts for driver appends whose payload
 * starts with a sequence number: where each sits, and which appear more than once.
 *
 * @param frames          every frame as position:term:type:length, for comparing members' logs.
 * @param sequenceAtEnd   sequence number of the entry that ends at each position.
 * @param occurrences     how many times each sequence number appears.
 */
public record LogAudit(List<String> frames, Long2LongHashMap sequenceAtEnd, Map<Long, Integer> occurrences)
{
    /**
     * @param logDir        a member's log directory.
     * @param payloadLength length of the driver's payloads.
     * @return what the log holds.
     */
    public static LogAudit of(final Path logDir, final int payloadLength)
    {
        final List<String> frames = new ArrayList<>();
        final Long2LongHashMap sequenceAtEnd = new Long2LongHashMap(-1);
        final Map<Long, Integer> occurrences = new HashMap<>();
        ArchiveLog.verify(logDir, (buffer, offset, length, position, term, type) ->
        {
            frames.add(position + ":" + term + ":" + type + ":" + length);
            if (LogEntryType.CLIENT_APPEND == type && length == payloadLength)
            {
                final long sequence = buffer.getLong(offset);
                sequenceAtEnd.put(position + FrameDescriptor.alignedFrameLength(length), sequence);
                occurrences.merge(sequence, 1, Integer::sum);
            }
        });
        return new LogAudit(frames, sequenceAtEnd, occurrences);
    }

    /**
     * @param acked sequence number to the position its ack named.
     * @return how many acknowledged appends are not where their ack said.
     */
    public long lost(final Long2LongHashMap acked)
    {
        final long[] lost = { 0 };
        acked.forEachLong((sequence, position) ->
        {
            if (sequenceAtEnd.get(position) != sequence)
            {
                lost[0]++;
            }
        });
        return lost[0];
    }

    /**
     * @return entries that appear more than once (a retried append whose first attempt did commit).
     */
    public long duplicated()
    {
        return occurrences.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
    }
}
