package io.lockstep.consensus.tool;

import io.lockstep.cluster.codecs.SessionEventDecoder;
import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.cluster.transport.LinkClass;
import io.lockstep.cluster.transport.Member;
import io.lockstep.cluster.transport.TcpTransport;
import io.lockstep.cluster.transport.TlsFiles;
import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.MemberProtocolShapes;
import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.BackupChunkDecoder;
import io.lockstep.consensus.codecs.BackupRequestEncoder;
import io.lockstep.consensus.codecs.BackupStatus;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ClientAppendAckDecoder;
import io.lockstep.consensus.codecs.ClientAppendEncoder;
import io.lockstep.consensus.codecs.ErrorsRequestEncoder;
import io.lockstep.consensus.codecs.ErrorsResponseDecoder;
import io.lockstep.consensus.codecs.MembershipAction;
import io.lockstep.consensus.codecs.MembershipChangeRequestEncoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.PromoteRequestEncoder;
import io.lockstep.consensus.codecs.PromoteResponseDecoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.ShutdownRequestEncoder;
import io.lockstep.consensus.codecs.SnapshotRequestEncoder;
import io.lockstep.consensus.codecs.StatusRequestEncoder;
import io.lockstep.consensus.codecs.StatusResponseDecoder;
import io.lockstep.consensus.codecs.SuspendRequestEncoder;
import io.lockstep.consensus.codecs.TransferLeadershipEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * A blocking client for tools, drivers and tests: status of every member, appends through the leader (following
 * redirects), leadership transfer. Not the deterministic core: it waits on the wall clock, with a deadline on every
 * call. Not the users' client either (that is {@code io.lockstep.cluster.client.ClusterClient}, with sessions and
 * exactly-once delivery): an append that times out or loses its leader may or may not have been committed.
 */
public final class AdminClient implements AutoCloseable
{
    /** One member's answer to a status request. */
    public record Status(
        int memberId,
        Role role,
        long term,
        int leaderId,
        long logPosition,
        long commitPosition,
        long logStartPosition,
        long snapshotPosition,
        long appliedPosition,
        long stateHash,
        List<PeerLag> peers,
        long configEpoch,
        long configVersion,
        long voters,
        long learners)
    {
    }

    /** As the leader sees another member: what it holds durably and how far behind it is. */
    public record PeerLag(int memberId, boolean voting, long matchPosition, long lagBytes, long lagNs)
    {
    }

    /** A piece of a member's snapshot or committed log, as {@code tool backup} pulls it. */
    public record BackupPiece(
        BackupStatus status,
        long snapshotPosition,
        long snapshotTerm,
        long snapshotLength,
        long commitPosition,
        long logStartPosition,
        long startPosition,
        long endPosition,
        byte[] bytes)
    {
    }

    /** One member's error log, as {@code tool errors} prints it. */
    /** A standby's answer to {@code tool promote}: its state, and whether it adopted the promotion. */
    public record PromoteAnswer(
        int memberId, boolean accepted, long configEpoch, long voters, long learners, long term, int leaderId,
        long sinceLeaderNs, long durablePosition, long lastTerm, long primaryCommitSeen, long meanEntryBytes,
        long primaryCommitRate, String detail)
    {
    }

    public record Errors(int memberId, long total, List<MemberErrors.Entry> recent)
    {
    }

    private final List<Member> members;
    private final TcpTransport transport;
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64 * 1024 + 256]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ClientAppendAckDecoder ackDecoder = new ClientAppendAckDecoder();
    private final StatusResponseDecoder statusDecoder = new StatusResponseDecoder();
    private final Map<Integer, Status> statuses = new HashMap<>();
    private final Map<Integer, Errors> errors = new HashMap<>();
    private final ErrorsResponseDecoder errorsDecoder = new ErrorsResponseDecoder();
    private final BackupChunkDecoder chunkDecoder = new BackupChunkDecoder();
    private final PromoteResponseDecoder promoteDecoder = new PromoteResponseDecoder();
    private PromoteAnswer promoteAnswer;
    private BackupPiece piece;
    private long correlationId = System.nanoTime();
    private long awaited = -1;
    private AppendStatus awaitedStatus;
    private long awaitedPosition;
    private int awaitedLeader;
    private int target;
    private String lastProblem;
    private final SessionEventDecoder refusalDecoder = new SessionEventDecoder();

    /**
     * A tool for a cluster run without secrets.
     */
    public AdminClient(final List<Member> members)
    {
        this(members, null);
    }

    /**
     * @param members the cluster's members.
     * @param secret  the tool secret, which the members require of tools; null if they run without secrets.
     */
    public AdminClient(final List<Member> members, final ClusterSecret secret)
    {
        this(members, secret, null);
    }

    /**
     * @param members the cluster's members.
     * @param secret  the tool secret, which the members require of tools; null if they run without secrets.
     * @param tls     the files to dial members with TLS (tools' links encrypted), or null to dial in the clear.
     */
    public AdminClient(final List<Member> members, final ClusterSecret secret, final TlsFiles tls)
    {
        this.members = List.copyOf(members);
        // Room for a backup piece (up to about 512 KiB of log frames).
        this.transport = new TcpTransport(-1, members, 0, 1024 * 1024 + 1024, secret,
            MemberProtocolShapes.create());
        if (null != tls)
        {
            transport.tls(tls, EnumSet.of(LinkClass.TOOLS));
        }
        this.transport.problemListener(problem -> lastProblem = problem);
        this.target = members.get(0).id();
    }

    /**
     * @return the last reason a member refused this tool (a connection it dropped, a request it refused), or null:
     * what to tell the operator when nothing answered.
     */
    public String lastProblem()
    {
        return lastProblem;
    }

    /**
     * Ask every member for its status.
     *
     * @return member id to status, for the members that answered in time.
     */
    public Map<Integer, Status> status(final long timeoutMs)
    {
        statuses.clear();
        askEveryMember(timeoutMs, statuses, () -> new StatusRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).encodedLength());
        return new HashMap<>(statuses);
    }

    /**
     * Send one request to each member as soon as it is connected, and poll until every member has answered into
     * {@code answers} or the time is up.
     *
     * @param encode writes the request into {@code buffer} after the header; returns its body length.
     */
    private void askEveryMember(
        final long timeoutMs, final Map<Integer, ?> answers, final IntSupplier encode)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final boolean[] asked = new boolean[members.size()];
        while (System.nanoTime() < deadline && answers.size() < members.size())
        {
            for (int i = 0; i < members.size(); i++)
            {
                if (!asked[i] && transport.isConnected(members.get(i).id()))
                {
                    asked[i] = transport.send(members.get(i).id(), buffer, 0,
                        MessageHeaderEncoder.ENCODED_LENGTH + encode.getAsInt());
                }
            }
            pollOnce();
        }
    }

    /**
     * Ask one member for a piece of its snapshot or of its committed log.
     *
     * @param snapshotPosition which snapshot (-1: the newest durable); ignored for the log.
     * @param from             snapshot: byte offset; log: position.
     * @param limit            log: position not to read past.
     * @return the piece, or null if the member did not answer in time.
     */
    public BackupPiece backupPiece(
        final int memberId, final boolean log, final long snapshotPosition, final long from, final long limit,
        final long timeoutMs)
    {
        piece = null;
        askOne(memberId, timeoutMs, () -> new BackupRequestEncoder().wrapAndApplyHeader(buffer, 0, headerEncoder)
            .correlationId(++correlationId)
            .log(log ? BooleanType.TRUE : BooleanType.FALSE)
            .snapshotPosition(snapshotPosition).from(from).limitPosition(limit).encodedLength(), () -> null != piece);
        return piece;
    }

    /**
     * Send one request to one member once it is connected, and poll until it is answered, the connection drops or
     * the time is up.
     *
     * @param encode   writes the request (with a new correlation id) after the header; returns its body length.
     * @param answered true once the answer has arrived.
     */
    private void askOne(
        final int memberId, final long timeoutMs, final IntSupplier encode,
        final BooleanSupplier answered)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline && !transport.isConnected(memberId))
        {
            pollOnce();
        }
        final int length = encode.getAsInt();
        awaited = correlationId;
        if (!transport.send(memberId, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + length))
        {
            return;
        }
        while (System.nanoTime() < deadline && !answered.getAsBoolean() && transport.isConnected(memberId))
        {
            pollOnce();
        }
    }

    /**
     * Ask one member for its state (check) or to adopt a promotion (see {@code PromoteRequest}).
     *
     * @return its answer, or null if it did not answer in time.
     */
    public PromoteAnswer promote(
        final int memberId, final boolean check, final long epoch, final long voters, final long learners,
        final long timeoutMs)
    {
        promoteAnswer = null;
        askOne(memberId, timeoutMs, () -> new PromoteRequestEncoder().wrapAndApplyHeader(buffer, 0, headerEncoder)
            .correlationId(++correlationId)
            .check(check ? BooleanType.TRUE
                : BooleanType.FALSE)
            .configEpoch(epoch).voters(voters).learners(learners).encodedLength(), () -> null != promoteAnswer);
        return promoteAnswer;
    }

    /**
     * Ask every member for its recent errors.
     *
     * @return member id to its errors, for the members that answered in time.
     */
    public Map<Integer, Errors> errors(final long timeoutMs)
    {
        errors.clear();
        askEveryMember(timeoutMs, errors, () -> new ErrorsRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).encodedLength());
        return new HashMap<>(errors);
    }

    /**
     * @return the id of the member that says it leads, waiting up to the timeout; -1 if none does.
     */
    public int awaitLeader(final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline)
        {
            for (final Status s : status(300).values())
            {
                if (Role.LEADER == s.role())
                {
                    return s.memberId();
                }
            }
        }
        return -1;
    }

    /**
     * Wait until every member answers at the same term, one of them leads, none stands for election, and all have
     * committed their whole log at the same position, past 0. A cluster that has not yet
     * elected its first leader is not converged, though every member is at position 0; nor is a leader just elected
     * whose first entry is not yet written or whose followers are still in the term before: a caller taking those
     * statuses as "before" would see the election, or the entry, that follows as a change.
     *
     * @return the members' statuses then, or null if that did not happen in time.
     */
    public Map<Integer, Status> awaitConverged(final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline)
        {
            final Map<Integer, Status> now = status(500);
            if (now.size() == members.size() &&
                now.values().stream().anyMatch(s -> Role.LEADER == s.role()) &&
                now.values().stream().noneMatch(s -> Role.CANDIDATE == s.role()) &&
                now.values().stream().map(Status::term).distinct().count() == 1 &&
                now.values().stream().allMatch(s -> s.commitPosition() > 0) &&
                now.values().stream().map(Status::commitPosition).distinct().count() == 1 &&
                now.values().stream().allMatch(s -> s.commitPosition() == s.logPosition()))
            {
                return now;
            }
        }
        return null;
    }

    /**
     * Append an entry through the leader and wait until it is committed.
     *
     * @return the log position after the entry, or -1 if no leader committed it before the deadline (its fate is
     * then unknown).
     */
    public long append(final DirectBuffer payload, final int offset, final int length, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline)
        {
            final ClientAppendEncoder encoder = new ClientAppendEncoder()
                .wrapAndApplyHeader(buffer, 0, headerEncoder)
                .correlationId(++correlationId)
                .putPayload(payload, offset, length);
            awaited = correlationId;
            awaitedStatus = null;
            if (!transport.send(target, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()))
            {
                // Not connected there (yet): polling makes connections; then try the next member.
                final long until = Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5));
                while (System.nanoTime() < until)
                {
                    pollOnce();
                }
                nextTarget(-1);
                continue;
            }
            // Wait for this append's ack, but not forever on one member: it may have died with the ack.
            pollFor(Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000)));
            if (AppendStatus.OK == awaitedStatus)
            {
                return awaitedPosition;
            }
            nextTarget(null == awaitedStatus ? -1 : awaitedLeader);
            if (AppendStatus.BACK_PRESSURED == awaitedStatus || AppendStatus.NOT_LEADER == awaitedStatus)
            {
                pollFor(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2));
            }
        }
        return -1;
    }

    /**
     * Ask the leader to hand leadership to a member.
     *
     * @return true if the leader accepted the request.
     */
    public boolean transferLeadership(final int leaderId, final int targetId, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline && !transport.isConnected(leaderId))
        {
            pollOnce();
        }
        target = leaderId;
        final TransferLeadershipEncoder encoder = new TransferLeadershipEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).targetMemberId(targetId);
        awaited = correlationId;
        awaitedStatus = null;
        if (!transport.send(leaderId, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()))
        {
            return false;
        }
        pollFor(deadline);
        return AppendStatus.OK == awaitedStatus;
    }

    /**
     * Ask the leader for a snapshot and wait until it is durable on the leader.
     *
     * @return the log position of the leader's newest durable snapshot then (at or after the one asked for), or -1
     * if no leader confirmed one before the deadline.
     */
    public long snapshot(final long timeoutMs)
    {
        return askLeader(timeoutMs, Ask.SNAPSHOT);
    }

    /**
     * Ask the leader for an orderly shutdown: every member takes a snapshot at the shutdown entry and stops once it
     * is durable, the leader last.
     *
     * @return the leader's snapshot position at the shutdown entry, or -1 if no leader confirmed it in time.
     */
    public long shutdown(final long timeoutMs)
    {
        return askLeader(timeoutMs, Ask.SHUTDOWN);
    }

    /**
     * Ask the leader to suspend (or resume) client ingress and timers, and wait until it applied the entry.
     *
     * @return the log position after the suspend or resume entry, or -1 if no leader confirmed it in time.
     */
    public long suspend(final boolean suspend, final long timeoutMs)
    {
        return askLeader(timeoutMs, suspend ? Ask.SUSPEND : Ask.RESUME);
    }

    /** What {@link #askLeader} asks for. */
    private enum Ask
    {
        SNAPSHOT, SHUTDOWN, SUSPEND, RESUME
    }

    private int encode(final Ask ask)
    {
        return switch (ask)
        {
            case SHUTDOWN -> new ShutdownRequestEncoder()
                .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).encodedLength();
            case SNAPSHOT -> new SnapshotRequestEncoder()
                .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).encodedLength();
            case SUSPEND, RESUME -> new SuspendRequestEncoder()
                .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId)
                .suspend(Ask.SUSPEND == ask ? BooleanType.TRUE :
                    BooleanType.FALSE).encodedLength();
        };
    }

    /**
     * Ask the leader for one membership change (see {@code MembershipChangeRequest}).
     *
     * @return the change's log position once committed, or -1 if refused (the reason is in the leader's errors) or
     * not done in time.
     */
    public long changeMembership(
        final MembershipAction action, final int memberId, final long timeoutMs)
    {
        return askLeader(timeoutMs, () -> new MembershipChangeRequestEncoder()
            .wrapAndApplyHeader(buffer, 0, headerEncoder).correlationId(++correlationId).action(action)
            .memberId(memberId).encodedLength());
    }

    private long askLeader(final long timeoutMs, final Ask ask)
    {
        return askLeader(timeoutMs, () -> encode(ask));
    }

    private long askLeader(final long timeoutMs, final IntSupplier encode)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline)
        {
            final int leader = awaitLeader(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (leader < 0)
            {
                return -1;
            }
            while (System.nanoTime() < deadline && !transport.isConnected(leader))
            {
                pollOnce();
            }
            target = leader;
            final int length = encode.getAsInt();
            awaited = correlationId;
            awaitedStatus = null;
            if (!transport.send(leader, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + length))
            {
                continue;
            }
            pollFor(deadline);
            if (AppendStatus.OK == awaitedStatus)
            {
                return awaitedPosition;
            }
            if (AppendStatus.REJECTED == awaitedStatus)
            {
                return -1;
            }
        }
        return -1;
    }

    public void close()
    {
        transport.close();
    }

    private void nextTarget(final int leaderHint)
    {
        if (leaderHint >= 0 && leaderHint != target)
        {
            target = leaderHint;
            return;
        }
        for (int i = 0; i < members.size(); i++)
        {
            if (members.get(i).id() == target)
            {
                target = members.get((i + 1) % members.size()).id();
                return;
            }
        }
    }

    private void pollFor(final long deadlineNs)
    {
        // A dead connection will never bring the ack: stop waiting at once and try elsewhere.
        while (System.nanoTime() < deadlineNs && null == awaitedStatus && transport.isConnected(target))
        {
            pollOnce();
        }
    }

    private void pollOnce()
    {
        final long now = System.nanoTime();
        final int work = transport.poll(now, this::onMessage) + transport.flush(now);
        if (0 == work)
        {
            Thread.onSpinWait();
            LockSupport.parkNanos(50_000);
        }
    }

    private static String detailOf(final PromoteResponseDecoder d)
    {
        final byte[] bytes = new byte[d.detailLength()];
        d.getDetail(bytes, 0, bytes.length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * An answer is taken only as the member the tool dialled: one peer at one member's address must not speak for
     * the others (report a leader, errors or a standby's state in their name, or fill their places so that the tool
     * stops waiting for them).
     *
     * @return true if the answer names another member than the connection's, which is then dropped and said.
     */
    private boolean answersAsAnother(final int from, final int memberId)
    {
        if (memberId == from)
        {
            return false;
        }
        lastProblem = "member " + from + " answered as member " + memberId + ": its answer is ignored (is another " +
            "member, or another cluster, at the address configured for member " + from + "?)";
        return true;
    }

    // Longer than the method bound: one case per response kind, each a few lines.
    @SuppressWarnings("checkstyle:MethodLength")
    private void onMessage(final int from, final DirectBuffer msg, final int offset, final int length)
    {
        headerDecoder.wrap(msg, offset);
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        if (headerDecoder.schemaId() == ClientAppendAckDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == ClientAppendAckDecoder.TEMPLATE_ID)
        {
            ackDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            if (ackDecoder.correlationId() == awaited)
            {
                awaitedStatus = ackDecoder.status();
                awaitedPosition = ackDecoder.position();
                awaitedLeader = ackDecoder.leaderId();
            }
        }
        else if (headerDecoder.schemaId() == SessionEventDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == SessionEventDecoder.TEMPLATE_ID)
        {
            // A member refusing a request from a connection that did not prove the tool secret.
            refusalDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            lastProblem = "member " + from + " refused: " + refusalDecoder.detail();
            if (refusalDecoder.correlationId() == awaited)
            {
                awaitedStatus = AppendStatus.REJECTED;
            }
        }
        else if (headerDecoder.schemaId() == ErrorsResponseDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == ErrorsResponseDecoder.TEMPLATE_ID)
        {
            errorsDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            final int memberId = errorsDecoder.memberId();
            if (answersAsAnother(from, memberId))
            {
                return;
            }
            final long total = errorsDecoder.totalErrors();
            final List<MemberErrors.Entry> recent = new ArrayList<>();
            for (final ErrorsResponseDecoder.ErrorsDecoder e : errorsDecoder.errors())
            {
                final long count = e.occurrences();
                final long first = e.firstEpochNs();
                final long last = e.lastEpochNs();
                final byte[] kind = new byte[e.kindLength()];
                e.getKind(kind, 0, kind.length);
                final byte[] message = new byte[e.messageLength()];
                e.getMessage(message, 0, message.length);
                recent.add(new MemberErrors.Entry(new String(kind, StandardCharsets.UTF_8),
                    new String(message, StandardCharsets.UTF_8), count, first, last));
            }
            errors.put(memberId, new Errors(memberId, total, recent));
        }
        else if (headerDecoder.schemaId() == BackupChunkDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == BackupChunkDecoder.TEMPLATE_ID)
        {
            chunkDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            if (chunkDecoder.correlationId() == awaited)
            {
                final BackupPiece p = new BackupPiece(chunkDecoder.status(), chunkDecoder.snapshotPosition(),
                    chunkDecoder.snapshotTerm(), chunkDecoder.snapshotLength(), chunkDecoder.commitPosition(),
                    chunkDecoder.logStartPosition(), chunkDecoder.startPosition(), chunkDecoder.endPosition(),
                    new byte[chunkDecoder.bytesLength()]);
                chunkDecoder.getBytes(p.bytes(), 0, p.bytes().length);
                piece = p;
            }
        }
        else if (headerDecoder.schemaId() == PromoteResponseDecoder.SCHEMA_ID &&
            headerDecoder.templateId() == PromoteResponseDecoder.TEMPLATE_ID)
        {
            promoteDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            if (promoteDecoder.correlationId() == awaited && !answersAsAnother(from, promoteDecoder.memberId()))
            {
                final PromoteResponseDecoder d = promoteDecoder;
                final long since = d.sinceLeaderNs();
                final PromoteAnswer answer = new PromoteAnswer(d.memberId(),
                    BooleanType.TRUE == d.accepted(), d.configEpoch(), d.voters(),
                    d.learners(), d.term(), d.leaderId(), since, d.durablePosition(), d.lastTerm(),
                    d.primaryCommitSeen(), d.meanEntryBytes(), Math.max(0, d.primaryCommitRate()), detailOf(d));
                promoteAnswer = answer;
            }
        }
        else if (headerDecoder.templateId() == StatusResponseDecoder.TEMPLATE_ID)
        {
            statusDecoder.wrap(msg, body, headerDecoder.blockLength(), headerDecoder.version());
            final int memberId = statusDecoder.memberId();
            if (answersAsAnother(from, memberId))
            {
                return;
            }
            final Status partial = new Status(memberId, statusDecoder.role(), statusDecoder.term(),
                statusDecoder.leaderId(), statusDecoder.logPosition(), statusDecoder.commitPosition(),
                statusDecoder.logStartPosition(), statusDecoder.snapshotPosition(), statusDecoder.appliedPosition(),
                statusDecoder.stateHash(), new ArrayList<>(), Math.max(0, statusDecoder.configEpoch()),
                Math.max(0, statusDecoder.configVersion()), statusDecoder.voters(), statusDecoder.learners());
            for (final StatusResponseDecoder.PeersDecoder peer : statusDecoder.peers())
            {
                partial.peers().add(new PeerLag(peer.memberId(),
                    BooleanType.TRUE == peer.voting(), peer.matchPosition(),
                    peer.lagBytes(), peer.lagNs()));
            }
            statuses.put(memberId, partial);
        }
    }
}
