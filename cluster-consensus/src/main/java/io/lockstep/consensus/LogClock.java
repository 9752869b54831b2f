package io.lockstep.consensus;

import io.lockstep.consensus.log.MessageHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochNanoClock;

import static io.lockstep.archive.FrameDescriptor.HEADER_LENGTH;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Log time: the timestamp the leader puts on every entry it appends, and the only time services see. Nanoseconds
 * since the Unix epoch (UTC), from the leader's wall clock, with two rules that a wall clock alone breaks:
 * <ol>
 *   <li><b>It never goes back along the log</b>, across leader changes included: a member's log time starts from
 *   the newest timestamp in its log (entries it appended or was sent, and the snapshot it started from), so a new
 *   leader whose clock is behind the old one's does not stamp an entry earlier than one it holds.</li>
 *   <li><b>It never stops.</b> While the wall clock is behind log time (it stepped back, or this leader's clock
 *   lags the previous leader's), log time goes on at half the speed of the monotonic clock until the wall clock
 *   catches up, rather than freezing until it does. A timer therefore fires at or after its deadline in log time,
 *   and its remaining delay stretches by at most a factor of two in real time while the leader's wall clock is
 *   behind; otherwise it fires on the first duty cycle at or after its deadline, plus the commit round trip (and a
 *   failover, if one happens: the new leader fires every timer that is due once its own log time passes it).</li>
 * </ol>
 * Forward wall-clock steps are followed at once. Drift is the wall clock's own.
 * <p>
 * Every log-entry template of {@code log-entries.xml} has {@code timestamp} as its first field, so the timestamp of
 * any entry frame is read at one place: just after its SBE message header (checked by a test). Frames that are not
 * log entries (a driver's opaque appends, padding) carry no time.
 */
public final class LogClock
{
    private static final int TIMESTAMP_OFFSET = HEADER_LENGTH + MessageHeaderDecoder.ENCODED_LENGTH;
    private static final int SCHEMA_ID_OFFSET = HEADER_LENGTH + 4;
    private static final int TEMPLATE_ID_OFFSET = HEADER_LENGTH + 2;

    private final EpochNanoClock wallClock;
    private long logTimeNs;
    private long lastMonotonicNs;
    private boolean running;

    /**
     * @param wallClock the member's wall clock, nanoseconds since the Unix epoch.
     */
    public LogClock(final EpochNanoClock wallClock)
    {
        this.wallClock = wallClock;
    }

    /**
     * Start stamping (on becoming leader): from the newest log time this member knows, or its wall clock if later.
     *
     * @param monotonicNs the duty cycle's monotonic clock reading.
     */
    void start(final long monotonicNs)
    {
        running = true;
        lastMonotonicNs = monotonicNs;
        logTimeNs = Math.max(logTimeNs, wallClock.nanoTime());
    }

    /**
     * Stop stamping (leadership lost): what was observed is kept.
     */
    void stop()
    {
        running = false;
    }

    /**
     * Advance log time for this duty cycle (leader only). One wall-clock reading.
     *
     * @param monotonicNs the duty cycle's monotonic clock reading.
     * @return log time for entries appended in this duty cycle.
     */
    long tick(final long monotonicNs)
    {
        assert running : "log time ticks only on the leader";
        final long elapsedNs = Math.max(0, monotonicNs - lastMonotonicNs);
        lastMonotonicNs = monotonicNs;
        logTimeNs = Math.max(wallClock.nanoTime(), logTimeNs + (elapsedNs >> 1));
        return logTimeNs;
    }

    /**
     * @return the current log time: the last stamp handed out, or the newest observed.
     */
    public long nowNs()
    {
        return logTimeNs;
    }

    /**
     * Take note of a log time found in the log (or a snapshot), so that this member never stamps below it.
     *
     * @param timestampNs an entry's timestamp.
     */
    public void observe(final long timestampNs)
    {
        if (timestampNs > logTimeNs)
        {
            logTimeNs = timestampNs;
        }
    }

    /**
     * Take note of the timestamp of a stored frame, if it is a log entry.
     *
     * @param buffer      holding the frame.
     * @param frameOffset index of the frame header.
     * @param frameType   the frame's type.
     */
    void observeFrame(final DirectBuffer buffer, final int frameOffset, final int frameType)
    {
        if (isTimestamped(buffer, frameOffset, frameType))
        {
            observe(buffer.getLong(frameOffset + TIMESTAMP_OFFSET, LITTLE_ENDIAN));
        }
    }

    /**
     * @return true if the frame is an entry of {@code log-entries.xml}: its type is its template id and its payload
     * starts with that schema's header.
     */
    public static boolean isTimestamped(final DirectBuffer buffer, final int frameOffset, final int frameType)
    {
        final int frameLength = buffer.getInt(frameOffset, LITTLE_ENDIAN);
        return frameType > 0 && frameType != LogEntryType.CLIENT_APPEND &&
            frameLength >= TIMESTAMP_OFFSET + Long.BYTES &&
            (buffer.getShort(frameOffset + SCHEMA_ID_OFFSET,
                LITTLE_ENDIAN) & 0xFFFF) == MessageHeaderDecoder.SCHEMA_ID &&
            (buffer.getShort(frameOffset + TEMPLATE_ID_OFFSET, LITTLE_ENDIAN) & 0xFFFF) == frameType;
    }

    /**
     * @return the timestamp of a stored log-entry frame (see {@link #isTimestamped}).
     */
    public static long timestampOf(final DirectBuffer buffer, final int frameOffset)
    {
        return buffer.getLong(frameOffset + TIMESTAMP_OFFSET, LITTLE_ENDIAN);
    }
}
