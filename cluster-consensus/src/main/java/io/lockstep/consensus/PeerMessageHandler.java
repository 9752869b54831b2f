package io.lockstep.consensus;

import io.lockstep.consensus.codecs.AppendRequestDecoder;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.BooleanType;
import io.lockstep.consensus.codecs.ConfigurationNoticeDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.RequestVoteDecoder;
import io.lockstep.consensus.codecs.TimeoutNowDecoder;
import io.lockstep.consensus.codecs.VoteDecoder;

/**
 * The messages members send each other (votes, appends, snapshots, configuration notices): one handler per kind,
 * each decoding with its flyweight, checking that the sender is who the connection proved to be and speaks for the
 * current configuration, and calling the agent. From a connection that is not a member, they are ignored: a tool
 * cannot vote or append.
 */
final class PeerMessageHandler
{
    private final ConsensusAgent agent;
    private final ClusterFormation formation;
    private final OwedFrames owedFrames;
    private final StandbyRelay relay;
    private final RequestVoteDecoder requestVote = new RequestVoteDecoder();
    private final VoteDecoder vote = new VoteDecoder();
    private final AppendRequestDecoder appendRequest = new AppendRequestDecoder();
    private final AppendResponseDecoder appendResponse = new AppendResponseDecoder();
    private final TimeoutNowDecoder timeoutNow = new TimeoutNowDecoder();
    private final InstallSnapshotDecoder installSnapshot = new InstallSnapshotDecoder();
    private final InstallSnapshotResponseDecoder installSnapshotResponse = new InstallSnapshotResponseDecoder();
    private final ConfigurationNoticeDecoder configurationNotice = new ConfigurationNoticeDecoder();

    PeerMessageHandler(
        final ConsensusAgent agent, final StandbyRelay relay, final ClusterFormation formation,
        final OwedFrames owedFrames)
    {
        this.agent = agent;
        this.owedFrames = owedFrames;
        this.relay = relay;
        this.formation = formation;
    }

    /**
     * @param message the whole message, header first, as the transport delivered it.
     * @return false if the template is not a member-to-member message.
     */
    boolean onMessage(final int templateId, final int from, final boolean fromMember, final InboundMessage message)
    {
        switch (templateId)
        {
            case RequestVoteDecoder.TEMPLATE_ID -> onRequestVote(from, fromMember, message);
            case VoteDecoder.TEMPLATE_ID -> onVote(from, fromMember, message);
            case AppendRequestDecoder.TEMPLATE_ID -> onAppendRequest(from, fromMember, message);
            case AppendResponseDecoder.TEMPLATE_ID -> onAppendResponse(from, fromMember, message);
            case TimeoutNowDecoder.TEMPLATE_ID -> onTimeoutNow(from, fromMember, message);
            case InstallSnapshotDecoder.TEMPLATE_ID -> onInstallSnapshot(from, fromMember, message);
            case InstallSnapshotResponseDecoder.TEMPLATE_ID -> onInstallSnapshotResponse(from, fromMember, message);
            case ConfigurationNoticeDecoder.TEMPLATE_ID -> onConfigurationNotice(from, fromMember, message);
            default ->
            {
                return false;
            }
        }
        return true;
    }

    private void onRequestVote(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        requestVote.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (!isSender(from, requestVote.candidateId(), "a vote request") ||
            !agent.membershipExchange().admit(from, requestVote.configEpoch(), requestVote.term()) ||
            !formation.acceptPeer(requestVote.clusterIdHigh(), requestVote.clusterIdLow(), from, "vote requests"))
        {
            return;
        }
        if (requestVote.holdingsRound() > 0)
        {
            // Not a vote: a member that owes lost frames asks what this one holds.
            owedFrames.onQuestion(requestVote.candidateId(), agent.term(), requestVote.term(),
                requestVote.holdingsRound());
            return;
        }
        agent.onRequestVote(requestVote.term(), requestVote.candidateId(), requestVote.lastLogTerm(),
            requestVote.lastLogPosition(), BooleanType.TRUE == requestVote.preVote(),
            BooleanType.TRUE == requestVote.transfer());
    }

    private void onVote(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        vote.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (isSender(from, vote.voterId(), "a vote") &&
            agent.membershipExchange().admit(from, vote.configEpoch(), vote.term()))
        {
            if (vote.holdingsRound() > 0)
            {
                // An answer to this member's question about frames it owes, not a vote (see OwedFrames).
                owedFrames.onAnswer(vote.voterId(), vote.holdingsRound(),
                    BooleanType.TRUE == vote.holdingsKnown() && formation.isOwnCluster(vote.clusterIdHigh(),
                    vote.clusterIdLow()), vote.configVersion(), vote.logPosition(), vote.lastLogTerm(),
                    vote.promisedPosition());
                return;
            }
            if (!formation.acceptPeer(vote.clusterIdHigh(), vote.clusterIdLow(), from, "votes"))
            {
                return;
            }
            if (BooleanType.TRUE == vote.preVote() && !formation.mayElect())
            {
                // The answer to a new member's question (an older sender's, without the field, counts as able).
                formation.onAnswer(vote.voterId(), vote.term(), BooleanType.FALSE != vote.mayElect());
            }
            agent.onVote(vote.term(), vote.voterId(), vote.candidateTerm(), BooleanType.TRUE == vote.granted(),
                BooleanType.TRUE == vote.preVote());
        }
    }

    private void onAppendRequest(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        final AppendRequestDecoder r = appendRequest.wrap(m.buffer, m.body, m.blockLength, m.version);
        // The leader, or for a standby the relay standby, which passes the leader's appends on as they came.
        final boolean sender = relay.isRelayedAppend(from) || isSender(from, r.leaderId(), "an append");
        if (!sender || !agent.membershipExchange().admit(from, r.configEpoch(), r.term()))
        {
            return;
        }
        final long term = r.term();
        final int leaderId = r.leaderId();
        final long sequence = r.sequence();
        final long prevPosition = r.prevPosition();
        final long prevTerm = r.prevTerm();
        final long commitPosition = r.commitPosition();
        final long clusterIdHigh = r.clusterIdHigh();
        final long clusterIdLow = r.clusterIdLow();
        final int bytesLength = r.logBytesLength();
        final int bytesOffset = r.limit() + AppendRequestDecoder.logBytesHeaderLength();
        if (bytesOffset + bytesLength > m.end())
        {
            agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
            agent.peerProblems().report("malformed", "dropped an append from member " + from + ": its log bytes (" +
                bytesLength + ") run past the message's end");
            return;
        }
        agent.onAppendRequest(term, leaderId, sequence, prevPosition, prevTerm, commitPosition, clusterIdHigh,
            clusterIdLow, m.buffer, bytesOffset, bytesLength);
        relay.forward(from, leaderId, m.buffer, m.offset, m.length);
    }

    private void onAppendResponse(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        appendResponse.wrap(m.buffer, m.body, m.blockLength, m.version);
        // Before the term is looked at: an acknowledgement of another cluster's member at this leader's term would
        // otherwise count towards the commit, and a committed entry could then be held by too few of this cluster.
        if (isSender(from, appendResponse.followerId(), "an append response") &&
            formation.acceptAcknowledgement(appendResponse.clusterIdHigh(), appendResponse.clusterIdLow(), from,
                "acknowledgements") &&
            agent.membershipExchange().admit(from, appendResponse.configEpoch(), appendResponse.term()))
        {
            agent.onAppendResponse(appendResponse);
        }
    }

    private void onTimeoutNow(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        timeoutNow.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (isSender(from, timeoutNow.leaderId(), "a leadership transfer"))
        {
            agent.onTimeoutNow(timeoutNow.term(), timeoutNow.leaderId());
        }
    }

    private void onInstallSnapshot(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        final InstallSnapshotDecoder s = installSnapshot.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (!isSender(from, s.leaderId(), "a snapshot chunk") ||
            !agent.membershipExchange().admit(from, s.configEpoch(), s.term()))
        {
            return;
        }
        final long chunkOffset = s.chunkOffset();
        final long totalLength = s.totalLength();
        final int chunkLength = s.chunkLength();
        final int bytesOffset = s.limit() + InstallSnapshotDecoder.chunkHeaderLength();
        // A snapshot ends at an entry of the leader's log, so its term is never above the leader's: one that is
        // would be refused again at every restart once installed.
        // In longs: a chunk length of 2^31 or more reads as negative, and sums of ints near it wrap.
        if (chunkLength < 0 || (long)bytesOffset + chunkLength > m.end() || chunkOffset < 0 || totalLength < 0 ||
            chunkOffset > totalLength - chunkLength || s.snapshotTerm() > s.term() || s.snapshotTerm() < 0 ||
            s.snapshotPosition() < 0)
        {
            agent.metrics().increment(MemberMetrics.MALFORMED_MESSAGES);
            agent.peerProblems().report("malformed", "dropped a snapshot chunk from member " + from + ": its " +
                "lengths, offset or term cannot be a snapshot's (chunk " + chunkLength + " bytes at " + chunkOffset +
                " of " + totalLength + ", snapshot term " + s.snapshotTerm() + " in term " + s.term() + ")");
            return;
        }
        agent.onInstallSnapshot(s, m.buffer, bytesOffset);
    }

    private void onInstallSnapshotResponse(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        final InstallSnapshotResponseDecoder r =
            installSnapshotResponse.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (isSender(from, r.followerId(), "a snapshot response") &&
            formation.acceptAcknowledgement(r.clusterIdHigh(), r.clusterIdLow(), from, "snapshot responses") &&
            agent.membershipExchange().admit(from, r.configEpoch(), r.term()))
        {
            agent.onInstallSnapshotResponse(r.term(), r.followerId(), r.snapshotPosition(), r.nextOffset(),
                BooleanType.TRUE == r.installed());
        }
    }

    private void onConfigurationNotice(final int from, final boolean fromMember, final InboundMessage m)
    {
        if (!fromMember)
        {
            return;
        }
        final ConfigurationNoticeDecoder n = configurationNotice.wrap(m.buffer, m.body, m.blockLength, m.version);
        if (isSender(from, n.memberId(), "a configuration notice") &&
            formation.acceptPeer(n.clusterIdHigh(), n.clusterIdLow(), from, "configuration notices"))
        {
            agent.membershipExchange().onNotice(from, n.configEpoch(), n.configVersion(), n.voters(), n.learners());
        }
    }

    /**
     * After the handshake a connection's member id is fixed: a member message whose sender field names another
     * member is dropped, so that one member (or whoever holds its credentials) cannot vote, acknowledge or announce a
     * configuration in another's name.
     */
    private boolean isSender(final int from, final int claimed, final String what)
    {
        if (claimed == from)
        {
            return true;
        }
        agent.metrics().increment(MemberMetrics.FORGED_SENDERS);
        agent.errors().record("forged-sender", "dropped " + what + " from member " + from + " that names member " +
            claimed + " as its sender");
        return false;
    }
}
