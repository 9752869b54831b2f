package io.lockstep.consensus;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One member's counters and gauges, written by the member's thread and read by any other (the metrics endpoint).
 * Single writer per value: each value is written with a release store and read with an acquire load; no lock, no
 * allocation, one array. Gauges are set once per duty cycle; counters are bumped where the event happens. The one
 * value kept outside the member thread, {@link #TLS_CERTIFICATE_EXPIRY}, is written only by the metrics endpoint's
 * thread, as it serves a scrape.
 * <p>
 * Names and help text are what {@code /metrics} prints (Prometheus text format); {@code COUNTER} marks the monotonic
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
    /** Leader: client messages appended to the log, and their payload bytes. */
    public static final int INGRESS_MESSAGES = 23;
    public static final int INGRESS_BYTES = 24;
    /** Leader: egress messages sent to clients, and their payload bytes. */
    public static final int EGRESS_MESSAGES = 25;
    public static final int EGRESS_BYTES = 26;
    /** Sends a full connection buffer refused, and appends refused because the leader's batch was full. */
    public static final int BACK_PRESSURE = 27;
    /** The services' pause while the last snapshot was taken, and that snapshot's size. */
    public static final int SNAPSHOT_PAUSE_NS = 28;
    public static final int SNAPSHOT_BYTES = 29;
    /** Log bytes held on disk: from the log's start (after purges) to its end. */
    public static final int LOG_RETAINED_BYTES = 30;
    /** Leader only: how long ago it first held a byte the furthest-behind voting follower lacks; 0 elsewhere. */
    public static final int FOLLOWER_LAG_NS = 31;
    /** Messages dropped as malformed, from clients or members (the member carries on). */
    public static final int MALFORMED_MESSAGES = 32;
    /** Leader only: bytes, and how long ago, the furthest-behind standby (non-voting member) lacks; 0 elsewhere. */
    public static final int STANDBY_LAG_BYTES = 33;
    public static final int STANDBY_LAG_NS = 34;
    /** Member messages dropped because their sender field names another member than the connection proved. */
    public static final int FORGED_SENDERS = 35;
    /** Client and tool connections open (past their Hello). */
    public static final int CLIENT_CONNECTIONS = 36;
    /** Session opens the leader refused because a bound was reached. */
    public static final int SESSION_OPENS_REFUSED = 37;
    /**
     * 1 from a start that found the log's promise file missing, or holding nothing, beside a log kept under batch
     * durability, until the member durably holds the log committed by a leader of a later term (restarts in between
     * keep it 1).
     */
    public static final int LOG_PROMISE_LOST = 38;
    /** When the first certificate of this member's TLS chain to expire does, in Unix seconds; 0 without TLS files. */
    public static final int TLS_CERTIFICATE_EXPIRY = 39;
    /** 1 while the member cannot write its log (no space left on its device): it acknowledges nothing new. */
    public static final int LOG_WRITE_BLOCKED = 40;
    /** Damaged log frames found while running and fetched again from the leader ({@link FrameRepair}). */
    public static final int LOG_FRAMES_REPAIRED = 41;
    /** Times this member lowered its promise after every other voter said it held nothing there (OwedFrames). */
    public static final int OWED_FRAMES_RELEASED = 42;
    /** 1 while frames this member owes may have been committed and no voter's log holds them (see OwedFrames). */
    public static final int OWED_FRAMES_HELD_NOWHERE = 43;

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
        new Definition("owes_lost_frames",
            "1 while this member lacks log frames it had acknowledged, lost to disk damage, until a peer resends them",
                false),
        new Definition("elections_started_total", "Pre-votes started", true),
        new Definition("leaderships_won_total", "Elections won", true),
        new Definition("step_downs_total", "Times this member stopped being leader", true),
        new Definition("log_bytes_replicated_in_total", "Log bytes appended from a leader", true),
        new Definition("client_appends_total", "Entries appended by tool append, as leader", true),
        new Definition("sessions", "Open client sessions", false),
        new Definition("snapshots_taken_total", "Snapshots taken", true),
        new Definition("snapshot_position", "Position of the newest durable snapshot, -1 if none", false),
        new Definition("duty_cycles_total", "Turns of the member's main loop (duty cycles) run", true),
        new Definition("connections_refused_total", "Connections refused or dropped: bad handshake, wrong " +
            "cluster secret, garbage", true),
        new Definition("untrusted_requests_total", "Tool requests refused: the connection did not prove the " +
            "tool secret", true),
        new Definition("client_auth_rejected_total", "Client connects and resumes the authenticator rejected", true),
        new Definition("errors_total", "Errors recorded (tool errors lists the recent ones)", true),
        new Definition("suspended", "1 while client ingress and timers are held (tool suspend)", false),
        new Definition("ingress_messages_total", "Leader: client messages appended to the log", true),
        new Definition("ingress_bytes_total", "Leader: payload bytes of client messages appended", true),
        new Definition("egress_messages_total", "Leader: egress messages sent to clients", true),
        new Definition("egress_bytes_total", "Leader: payload bytes of egress sent to clients", true),
        new Definition("back_pressure_total", "Sends refused by a full connection buffer and appends refused by a " +
            "full batch", true),
        new Definition("snapshot_pause_ns", "Services' pause while the last snapshot was taken, ns", false),
        new Definition("snapshot_bytes", "Size of the last snapshot taken", false),
        new Definition("log_retained_bytes", "Log bytes held: from the log's start (after purges) to its end", false),
        new Definition("follower_lag_ns", "Leader only: how long ago it first held a byte the furthest-behind " +
            "voting follower lacks", false),
        new Definition("malformed_messages_total", "Messages dropped as malformed, from clients or members", true),
        new Definition("standby_lag_bytes", "Leader only: bytes the furthest-behind standby lacks", false),
        new Definition("standby_lag_ns", "Leader only: how long ago it first held a byte the furthest-behind " +
            "standby lacks", false),
        new Definition("forged_senders_total", "Member messages dropped: their sender field names another member " +
            "than the connection's", true),
        new Definition("client_connections", "Client and tool connections open (past their Hello)", false),
        new Definition("session_opens_refused_total", "Session opens refused at a bound: table full, sessions per " +
            "connection or principal, opens per second", true),
        new Definition("log_promise_lost", "1 if at start the log's promise file was missing or held nothing " +
            "beside a non-empty log under batch durability", false),
        new Definition("tls_certificate_expiry_seconds", "When the first certificate of this member's TLS chain " +
            "expires, Unix seconds (0 without TLS files); follows replaced files", false),
        new Definition("log_write_blocked", "1 while the member cannot write its log (no space left on its " +
            "device): it acknowledges nothing new, leads no more, and writes again by itself once there is space",
            false),
        new Definition("log_frames_repaired_total", "Damaged log frames found while running: the log was cut there " +
            "and the rest fetched again from the leader", true),
        new Definition("owed_frames_released_total", "Times this member, owing lost frames, found that no other " +
            "voter's log or promise reached them (never committed) and lowered its promise", true),
        new Definition("owed_frames_held_nowhere", "1 while this member owes lost frames that may have been " +
            "committed and no voter's log holds them all: the cluster waits for an operator to restore it from a " +
            "backup or accept the loss", false),
    };

    private static final int COUNT = DEFINITIONS.length;

    private final AtomicLongArray values = new AtomicLongArray(COUNT);

    /** Upper bounds of the log flush time histogram's buckets, ns (Prometheus {@code le}, plus +Inf). */
    private static final long[] FLUSH_BUCKETS_NS = {
        50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 100_000_000 };
    /** Counts per bucket (not cumulative; the last is +Inf), then the sum of ns, then the count. */
    private final AtomicLongArray flushHistogram = new AtomicLongArray(FLUSH_BUCKETS_NS.length + 3);

    /**
     * One log sync's duration, as the member thread sees it finish (member thread only): a few stores, no allocation.
     */
    public void recordFlush(final long durationNs)
    {
        int bucket = 0;
        while (bucket < FLUSH_BUCKETS_NS.length && durationNs > FLUSH_BUCKETS_NS[bucket])
        {
            bucket++;
        }
        flushHistogram.setRelease(bucket, flushHistogram.getPlain(bucket) + 1);
        final int sum = FLUSH_BUCKETS_NS.length + 1;
        flushHistogram.setRelease(sum, flushHistogram.getPlain(sum) + durationNs);
        flushHistogram.setRelease(sum + 1, flushHistogram.getPlain(sum + 1) + 1);
    }

    /** @return buckets with an upper bound (a last one, above them all, is +Inf). */
    public static int flushBucketCount()
    {
        return FLUSH_BUCKETS_NS.length;
    }

    /** @return the upper bound of a flush time bucket, ns. */
    public static long flushBucketBoundNs(final int bucket)
    {
        return FLUSH_BUCKETS_NS[bucket];
    }

    /**
     * @param bucket 0 to {@link #flushBucketCount()} (the last: above every bound).
     * @return flushes in that bucket alone, from any thread.
     */
    public long flushesIn(final int bucket)
    {
        return flushHistogram.getAcquire(bucket);
    }

    /** @return nanoseconds spent in timed flushes, from any thread. */
    public long flushNanosTotal()
    {
        return flushHistogram.getAcquire(FLUSH_BUCKETS_NS.length + 1);
    }

    /** @return timed flushes, from any thread. */
    public long flushCount()
    {
        return flushHistogram.getAcquire(FLUSH_BUCKETS_NS.length + 2);
    }

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
        set(LOG_RETAINED_BYTES, logPosition - logStartPosition);
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
     * The leader's view of how far its followers and standbys are behind, in time and (standbys) bytes; zeros on any
     * other member (member thread only, once per duty cycle).
     */
    void onLeaderLag(final boolean leading, final LeaderReplication leader)
    {
        set(FOLLOWER_LAG_NS, leading ? leader.maxLagNs(true) : 0);
        set(STANDBY_LAG_NS, leading ? leader.maxLagNs(false) : 0);
        set(STANDBY_LAG_BYTES, leading ? leader.maxStandbyLagBytes() : 0);
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
