package io.lockstep.consensus;

import io.lockstep.cluster.transport.Transport;
import io.lockstep.consensus.codecs.AppendRequestEncoder;
import io.lockstep.consensus.codecs.AppendResponseEncoder;
import io.lockstep.consensus.codecs.AppendStatus;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ClientAppendAckEncoder;
import io.lockstep.consensus.codecs.ConfigurationNoticeEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotEncoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseEncoder;
import io.lockstep.consensus.codecs.MessageHeaderEncoder;
import io.lockstep.consensus.codecs.RequestVoteEncoder;
import io.lockstep.consensus.codecs.Role;
import io.lockstep.consensus.codecs.StatusResponseEncoder;
import io.lockstep.consensus.codecs.TimeoutNowEncoder;
import io.lockstep.consensus.codecs.VoteEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Encodes the consensus agent's outbound messages with flyweights over one preallocated buffer and hands them to
 * the transport. Every method returns false when the transport pushes back; the caller retries on a later cycle.
 */
final class MemberProtocolPublisher
{
    /** Room for headers, fixed fields and a term-start group beyond the log bytes. */
    private static final int OVERHEAD = 64 * 1024;
    /** Bound on term starts in one rejection: the lowest ones above the follower's commit (see AppendResponse). */
    static final int MAX_TERM_STARTS = 1024;

    private final Transport transport;
    private final UnsafeBuffer buffer;
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private final RequestVoteEncoder requestVote = new RequestVoteEncoder();
    private final VoteEncoder vote = new VoteEncoder();
    private final AppendRequestEncoder appendRequest = new AppendRequestEncoder();
    private final AppendResponseEncoder appendResponse = new AppendResponseEncoder();
    private final TimeoutNowEncoder timeoutNow = new TimeoutNowEncoder();
    private final ClientAppendAckEncoder clientAppendAck = new ClientAppendAckEncoder();
    private final StatusResponseEncoder statusResponse = new StatusResponseEncoder();
    private static final PeerState[] NO_PEERS = new PeerState[0];
    private final InstallSnapshotEncoder installSnapshot = new InstallSnapshotEncoder();
    private final InstallSnapshotResponseEncoder installSnapshotResponse = new InstallSnapshotResponseEncoder();

    private final ConfigurationNoticeEncoder configurationNotice =
        new ConfigurationNoticeEncoder();
    private final Membership membership;
    private final ClusterFormation formation;

    MemberProtocolPublisher(
        final Transport transport, final int maxBlockBytes, final Membership membership,
        final ClusterFormation formation)
    {
        this.transport = transport;
        this.membership = membership;
        this.formation = formation;
        this.buffer = new UnsafeBuffer(new byte[maxBlockBytes + OVERHEAD]);
    }

    boolean requestVote(
        final int to,
        final long term,
        final int candidateId,
        final long lastLogTerm,
        final long lastLogPosition,
        final boolean preVote,
        final boolean transfer)
    {
        requestVote.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .candidateId(candidateId)
            .lastLogTerm(lastLogTerm)
            .lastLogPosition(lastLogPosition)
            .preVote(bool(preVote))
            .transfer(bool(transfer))
            .configEpoch(membership.epoch())
            .holdingsRound(0)
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low());
        return send(to, requestVote.encodedLength());
    }

    /** Ask a voter what it holds ({@link OwedFrames}): a pre-vote request that carries the round, and is no vote. */
    boolean askHoldings(
        final int to, final long term, final int memberId, final long lastLogTerm, final long lastLogPosition,
        final long round)
    {
        requestVote.wrapAndApplyHeader(buffer, 0, header)
            .term(term + 1)
            .candidateId(memberId)
            .lastLogTerm(lastLogTerm)
            .lastLogPosition(lastLogPosition)
            .preVote(BooleanType.TRUE)
            .transfer(BooleanType.FALSE)
            .configEpoch(membership.epoch())
            .holdingsRound(round)
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low());
        return send(to, requestVote.encodedLength());
    }

    /**
     * Ask every voting member for its (pre-)vote. A pre-vote goes to the standbys too, for one reason: a standby
     * promoted while this member was away answers with the newer membership (ConfigurationNotice), which fences this
     * member before it can lead.
     */
    void requestVotes(
        final PeerState[] peers,
        final long term,
        final int candidateId,
        final long lastLogTerm,
        final long lastLogPosition,
        final boolean preVote,
        final boolean transfer)
    {
        for (final PeerState peer : peers)
        {
            if (peer.voting || (preVote && peer.learner))
            {
                requestVote(peer.id, term, candidateId, lastLogTerm, lastLogPosition, preVote, transfer);
            }
        }
    }

    boolean vote(
        final int to, final long term, final int voterId, final long candidateTerm, final boolean granted,
        final boolean preVote)
    {
        vote.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .voterId(voterId)
            .candidateTerm(candidateTerm)
            .granted(bool(granted))
            .preVote(bool(preVote))
            .configEpoch(membership.epoch())
            .mayElect(bool(formation.mayElect()))
            .holdingsRound(0)
            .holdingsKnown(BooleanType.FALSE)
            .configVersion(membership.version())
            .logPosition(0)
            .promisedPosition(0)
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low())
            .lastLogTerm(0);
        return send(to, vote.encodedLength());
    }

    /**
     * Answer a holdings question ({@link OwedFrames}): a refused pre-vote that carries the round and what this
     * member's log and promise reach.
     *
     * @param known false if this member cannot vouch for what it may have acknowledged.
     */
    boolean holdings(
        final int to, final long term, final int voterId, final long candidateTerm, final long round,
        final boolean known, final long logPosition, final long lastLogTerm, final long promisedPosition)
    {
        vote.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .voterId(voterId)
            .candidateTerm(candidateTerm)
            .granted(BooleanType.FALSE)
            .preVote(BooleanType.TRUE)
            .configEpoch(membership.epoch())
            .mayElect(bool(formation.mayElect()))
            .holdingsRound(round)
            .holdingsKnown(bool(known))
            .configVersion(membership.version())
            .logPosition(logPosition)
            .promisedPosition(promisedPosition)
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low())
            .lastLogTerm(lastLogTerm);
        return send(to, vote.encodedLength());
    }

    boolean appendRequest(
        final int to,
        final long term,
        final int leaderId,
        final long sequence,
        final long prevPosition,
        final long prevTerm,
        final long commitPosition,
        final DirectBuffer logBytes,
        final int offset,
        final int length)
    {
        appendRequest.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .leaderId(leaderId)
            .sequence(sequence)
            .prevPosition(prevPosition)
            .prevTerm(prevTerm)
            .commitPosition(commitPosition)
            .configEpoch(membership.epoch())
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low())
            .putLogBytes(logBytes, offset, length);
        return send(to, appendRequest.encodedLength());
    }

    boolean appendResponse(
        final int to,
        final long term,
        final int followerId,
        final long sequence,
        final boolean success,
        final long appendedPosition,
        final long durablePosition,
        final long commitPosition,
        final TermIndex termIndex)
    {
        appendResponse.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .followerId(followerId)
            .sequence(sequence)
            .success(bool(success))
            .appendedPosition(appendedPosition)
            .durablePosition(durablePosition)
            .commitPosition(commitPosition)
            .configEpoch(membership.epoch())
            .clusterIdHigh(vouchedHigh())
            .clusterIdLow(vouchedLow());
        if (success)
        {
            appendResponse.termStartsCount(0);
        }
        else
        {
            final int first = termIndex.firstIndexReaching(commitPosition);
            final int count = Math.min(termIndex.size() - first, MAX_TERM_STARTS);
            final AppendResponseEncoder.TermStartsEncoder starts = appendResponse.termStartsCount(count);
            for (int i = first; i < first + count; i++)
            {
                starts.next().term(termIndex.term(i)).startPosition(termIndex.start(i));
            }
        }
        return send(to, appendResponse.encodedLength());
    }

    /**
     * The identity an acknowledgement names: only a sealed one. An unsealed identity vouches for nothing, and a
     * follower that still holds one its leader's cluster has since replaced (a first leader's that was never
     * committed) answers some messages before it takes the leader's, for instance rejecting an append of an older
     * term; a sealed leader would ignore those answers for good. None is named instead, which every leader takes.
     */
    private long vouchedHigh()
    {
        return formation.identity().sealed() ? formation.identity().high() : 0;
    }

    private long vouchedLow()
    {
        return formation.identity().sealed() ? formation.identity().low() : 0;
    }

    boolean timeoutNow(final int to, final long term, final int leaderId)
    {
        timeoutNow.wrapAndApplyHeader(buffer, 0, header).term(term).leaderId(leaderId);
        return send(to, timeoutNow.encodedLength());
    }

    boolean clientAppendAck(
        final int to, final long correlationId, final AppendStatus status, final long position, final int leaderId)
    {
        clientAppendAck.wrapAndApplyHeader(buffer, 0, header)
            .correlationId(correlationId)
            .status(status)
            .position(position)
            .leaderId(leaderId);
        return send(to, clientAppendAck.encodedLength());
    }

    boolean statusResponse(
        final int to,
        final long correlationId,
        final int memberId,
        final Role role,
        final long term,
        final int leaderId,
        final long logPosition,
        final long commitPosition,
        final long logStartPosition,
        final long snapshotPosition,
        final long appliedPosition,
        final long stateHash,
        final LeaderReplication leading)
    {
        statusResponse.wrapAndApplyHeader(buffer, 0, header)
            .correlationId(correlationId)
            .memberId(memberId)
            .role(role)
            .term(term)
            .leaderId(leaderId)
            .logPosition(logPosition)
            .commitPosition(commitPosition)
            .logStartPosition(logStartPosition)
            .snapshotPosition(snapshotPosition)
            .appliedPosition(appliedPosition)
            .stateHash(stateHash)
            .configEpoch(membership.epoch())
            .configVersion(membership.version())
            .voters(membership.voters())
            .learners(membership.learners());
        final PeerState[] peers = null == leading ? NO_PEERS : leading.peers();
        int members = 0;
        for (final PeerState peer : peers)
        {
            members += peer.voting || peer.learner ? 1 : 0;
        }
        // Members of the configuration only: a removed one is sent nothing and has no lag to show.
        final StatusResponseEncoder.PeersEncoder group = statusResponse.peersCount(members);
        for (final PeerState peer : peers)
        {
            if (peer.voting || peer.learner)
            {
                group.next().memberId(peer.id).voting(bool(peer.voting)).matchPosition(peer.matchPosition)
                    .lagBytes(leading.lagBytes(peer)).lagNs(leading.lagNs(peer));
            }
        }
        return send(to, statusResponse.encodedLength());
    }

    boolean installSnapshot(
        final int to,
        final long term,
        final int leaderId,
        final long snapshotPosition,
        final long snapshotTerm,
        final long offset,
        final long totalLength,
        final DirectBuffer chunk,
        final int chunkOffset,
        final int chunkLength)
    {
        installSnapshot.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .leaderId(leaderId)
            .snapshotPosition(snapshotPosition)
            .snapshotTerm(snapshotTerm)
            .chunkOffset(offset)
            .totalLength(totalLength)
            .configEpoch(membership.epoch());
        membership.committedTo(installSnapshot);
        installSnapshot
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low())
            .putChunk(chunk, chunkOffset, chunkLength);
        return send(to, installSnapshot.encodedLength());
    }

    boolean installSnapshotResponse(
        final int to,
        final long term,
        final int followerId,
        final long snapshotPosition,
        final long nextOffset,
        final boolean installed)
    {
        installSnapshotResponse.wrapAndApplyHeader(buffer, 0, header)
            .term(term)
            .followerId(followerId)
            .snapshotPosition(snapshotPosition)
            .nextOffset(nextOffset)
            .installed(bool(installed))
            .configEpoch(membership.epoch())
            .clusterIdHigh(vouchedHigh())
            .clusterIdLow(vouchedLow());
        return send(to, installSnapshotResponse.encodedLength());
    }

    /** Tell a member that spoke on another membership epoch which one this member is on. */
    boolean configurationNotice(final int to, final int memberId)
    {
        configurationNotice.wrapAndApplyHeader(buffer, 0, header)
            .memberId(memberId)
            .configEpoch(membership.epoch())
            .voters(membership.voters())
            .learners(membership.learners())
            .configVersion(membership.version())
            .clusterIdHigh(formation.identity().high())
            .clusterIdLow(formation.identity().low());
        return send(to, configurationNotice.encodedLength());
    }

    private boolean send(final int to, final int bodyLength)
    {
        return transport.send(to, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + bodyLength);
    }

    private static BooleanType bool(final boolean value)
    {
        return value ? BooleanType.TRUE : BooleanType.FALSE;
    }
}
