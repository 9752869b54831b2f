package io.lockstep.consensus;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One member's counters and gauges, written by the member's thread and read by any other (the metrics endpoint).
 * Single writer: each value is written with a release store and read with an acquire load; no lock, no allocation,
 * one array. Gauges are set once per duty cycle; counters are bumped where the event happens.
 * <p>
 * Names and help text are what {@code /metrics} prints (Prometheus text format); {@link #COUNTER} marks the monotonic
 * ones (printed as {@code counter}, the rest as {@code gauge}).
 */
public final class MemberMetrics
{
    /** Role: 0 follower, 1 candidate, 2 leader. */
    public static final int ROLE = 0;
    public static final int TERM = 1;
    /** The leader this member follows (or itself), -1 if none is known. */
    public static final int LEADER_ID = 2;
    public static final int LOG_POSITION = 3;
    public static final int COMMIT_POSITION = 4;
    public static final int LOG_START_POSITION = 5;
    /** Entries applied by the service (the commit position for a member with no service). */
    public static final int APPLIED_POSITION = 6;
    /** Leader only: bytes the furthest-behind voting follower lacks of the leader's log; 0 elsewhere. */
    public static final int FOLLOWER_LAG_BYTES = 7;
    /** 1 while the member owes log frames it lost to disk damage (it neither stands nor votes short). */
    public static final int OWES_LOST_FRAMES = 8;
    public static final int ELECTIONS_STARTED = 9;
    public static final int LEADERSHIPS_WON = 10;
    public static final int STEP_DOWNS = 11;
    public static final int LOG_BYTES_REPLICATED_IN = 12;
    public static final int CLIENT_APPENDS = 13;
    public static final int SESSIONS = 14;
    public static final int SNAPSHOTS_TAKEN = 15;
    public static final int SNAPSHOT_POSITION = 16;
    public static final int DUTY_CYCLES = 17;
    /** Connections refused or dropped by the transport (bad handshake, wrong secret, garbage). */
    public static final int CONNECTIONS_REFUSED = 18;
    /** Tool requests refused because the connection had not proved the cluster secret. */
    public static final int UNTRUSTED_REQUESTS = 19;
    /** Client connects and resumes the authenticator rejected. */
    public static final int CLIENT_AUTH_REJECTED = 20;
    /** Errors recorded in the member's error log ({@code tool errors} lists them). */
    public static final int ERRORS = 21;
    /** 1 while client ingress and timers are held (tool suspend). */
    public static final int SUSPENDED = 22;

    /** One metric: its name without the {@code lockstep_} prefix, help text, and whether it only rises. */
    private record Definition(String name, String help, boolean counter)
    {
    }

    /** By index; the order is the constants'. */
    private static final Definition[] DEFINITIONS = {
        new Definition("role", "Role: 0 follower, 1 candidate, 2 leader", false),
        new Definition("term", "Current term", false),
        new Definition("leader_id", "Leader this member follows, -1 if none known", false),
        new Definition("log_position", "Position after the last frame in the log", false),
        new Definition("commit_position", "Highest position known committed", false),
        new Definition("log_start_position", "First position still held (after purges)", false),
        new Definition("applied_position", "Position the service has applied up to", false),
        new Definition("follower_lag_bytes", "Leader only: bytes the furthest-behind voting follower lacks", false),
        new Definition("owes_lost_frames", "1 while frames lost to disk damage are owed", false),
        new Definition("elections_started_total", "Pre-votes started", true),
        new Definition("leaderships_won_total", "Elections won", true),
        new Definition("step_downs_total", "Times this member stopped being leader", true),
        new Definition("log_bytes_replicated_in_total", "Log bytes appended from a leader", true),
        new Definition("client_appends_total", "Driver appends accepted as leader", true),
        new Definition("sessions", "Open client sessions", false),
        new Definition("snapshots_taken_total", "Snapshots taken", true),
        new Definition("snapshot_position", "Position of the newest durable snapshot, -1 if none", false),
        new Definition("duty_cycles_total", "Duty cycles run", true),
        new Definition("connections_refused_total", "Connections refused or dropped: bad handshake, wrong " +
            "cluster secret, garbage", true),
        new Definition("untrusted_requests_total", "Tool requests refused: the connection did not prove the " +
            "cluster secret", true),
        new Definition("client_auth_rejected_total", "Client connects and resumes the authenticator rejected", true),
        new Definition("errors_total", "Errors recorded (tool errors lists the recent ones)", true),
        new Definition("suspended", "1 while client ingress and timers are held (tool suspend)", false),
    };

    private static final int COUNT = DEFINITIONS.length;

    private final AtomicLongArray values = new AtomicLongArray(COUNT);

    public MemberMetrics()
    {
        values.set(LEADER_ID, -1);
        values.set(SNAPSHOT_POSITION, -1);
    }

    /**
     * The consensus agent's gauges, once per duty cycle (member thread only): a few release stores, no allocation.
     */
    public void onDutyCycle(
        final int role,
        final long term,
        final int leaderId,
        final long logPosition,
        final long commitPosition,
        final long logStartPosition,
        final long followerLagBytes,
        final boolean owesLostFrames,
        final boolean appliedIsCommit)
    {
        set(ROLE, role);
        set(TERM, term);
        set(LEADER_ID, leaderId);
        set(LOG_POSITION, logPosition);
        set(COMMIT_POSITION, commitPosition);
        set(LOG_START_POSITION, logStartPosition);
        set(FOLLOWER_LAG_BYTES, followerLagBytes);
        set(OWES_LOST_FRAMES, owesLostFrames ? 1 : 0);
        if (appliedIsCommit)
        {
            // A member without a service applies nothing: what it has is what is committed.
            set(APPLIED_POSITION, commitPosition);
        }
        increment(DUTY_CYCLES);
    }

    /**
     * Set a gauge (member thread only).
     */
    public void set(final int metric, final long value)
    {
        values.setRelease(metric, value);
    }

    /**
     * Count an event (member thread only: a plain read and a release store, not an atomic add).
     */
    public void increment(final int metric)
    {
        values.setRelease(metric, values.getPlain(metric) + 1);
    }

    /**
     * Count several (member thread only).
     */
    public void add(final int metric, final long delta)
    {
        values.setRelease(metric, values.getPlain(metric) + delta);
    }

    /**
     * @return the value, from any thread.
     */
    public long get(final int metric)
    {
        return values.getAcquire(metric);
    }

    /**
     * @return how many metrics there are (indices 0 to count - 1).
     */
    public static int count()
    {
        return COUNT;
    }

    /**
     * @return the metric's name, without the {@code lockstep_} prefix.
     */
    public static String name(final int metric)
    {
        return DEFINITIONS[metric].name();
    }

    /**
     * @return the metric's help text.
     */
    public static String help(final int metric)
    {
        return DEFINITIONS[metric].help();
    }

    /**
     * @return true if the metric only ever rises.
     */
    public static boolean isCounter(final int metric)
    {
        return DEFINITIONS[metric].counter();
    }
}
