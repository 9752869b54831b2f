package io.lockstep.consensus;

import io.lockstep.cluster.transport.ClientProtocolShapes;
import io.lockstep.cluster.transport.MessageShape;
import io.lockstep.cluster.transport.MessageShapes;
import io.lockstep.consensus.codecs.AppendRequestDecoder;
import io.lockstep.consensus.codecs.AppendResponseDecoder;
import io.lockstep.consensus.codecs.BackupChunkDecoder;
import io.lockstep.consensus.codecs.BackupRequestDecoder;
import io.lockstep.consensus.codecs.ClientAppendAckDecoder;
import io.lockstep.consensus.codecs.ClientAppendDecoder;
import io.lockstep.consensus.codecs.ConfigurationNoticeDecoder;
import io.lockstep.consensus.codecs.ErrorsRequestDecoder;
import io.lockstep.consensus.codecs.ErrorsResponseDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotDecoder;
import io.lockstep.consensus.codecs.InstallSnapshotResponseDecoder;
import io.lockstep.consensus.codecs.MembershipChangeRequestDecoder;
import io.lockstep.consensus.codecs.MessageHeaderDecoder;
import io.lockstep.consensus.codecs.PromoteRequestDecoder;
import io.lockstep.consensus.codecs.PromoteResponseDecoder;
import io.lockstep.consensus.codecs.RequestVoteDecoder;
import io.lockstep.consensus.codecs.ShutdownRequestDecoder;
import io.lockstep.consensus.codecs.SnapshotRequestDecoder;
import io.lockstep.consensus.codecs.StatusRequestDecoder;
import io.lockstep.consensus.codecs.StatusResponseDecoder;
import io.lockstep.consensus.codecs.SuspendRequestDecoder;
import io.lockstep.consensus.codecs.TimeoutNowDecoder;
import io.lockstep.consensus.codecs.TransferLeadershipDecoder;
import io.lockstep.consensus.codecs.VoteDecoder;

/**
 * The shape of every message of the member protocol ({@code member-protocol.xml}) that travels between members, or
 * between a member and a tool: what a member's or tool's transport checks each such message against before any
 * decoder reads it. The schema's file-only messages ({@code ElectionState}, {@code LogBase}) never travel, so a
 * connection that sends one is dropped. Held to the schema by a test.
 */
public final class MemberProtocolShapes
{
    /** The schema's maxValue for {@code varDataEncoding}. */
    private static final int MAX_DATA_LENGTH = 16 * 1024 * 1024;
    /** Version 3 added the membership epoch (and, where a message carries one, the configuration after it). */
    private static final int MEMBERSHIP_VERSION = 3;
    /**
     * Version 4 added the cluster identity to appends, snapshot chunks, vote requests, votes, configuration notices
     * and the acknowledgements of appends and chunks, whether a voter may vote and what it holds to its answers (and
     * the question to vote requests), and the commit rate a standby saw to its answer to a promotion.
     */
    private static final int IDENTITY_VERSION = 4;

    private MemberProtocolShapes()
    {
    }

    /**
     * @return the client protocol and the member protocol: what members and tools read.
     */
    public static MessageShapes create()
    {
        final int schema = MessageHeaderDecoder.SCHEMA_ID;
        final MessageShapes shapes = new MessageShapes()
            .schema(schema, MessageHeaderDecoder.SCHEMA_VERSION, MessageHeaderDecoder.class.getPackageName());
        raft(shapes, schema);
        tools(shapes, schema);
        return ClientProtocolShapes.create().add(shapes);
    }

    private static void raft(final MessageShapes shapes, final int schema)
    {
        shapes
            .message(schema, RequestVoteDecoder.TEMPLATE_ID,
                since3(30, 38).grownTo(IDENTITY_VERSION, RequestVoteDecoder.BLOCK_LENGTH))
            .message(schema, VoteDecoder.TEMPLATE_ID,
                since3(22, 30).grownTo(IDENTITY_VERSION, VoteDecoder.BLOCK_LENGTH))
            .message(schema, AppendRequestDecoder.TEMPLATE_ID,
                since3(44, 52).grownTo(IDENTITY_VERSION, AppendRequestDecoder.BLOCK_LENGTH).varData(MAX_DATA_LENGTH))
            .message(schema, AppendResponseDecoder.TEMPLATE_ID,
                since3(45, 53).grownTo(IDENTITY_VERSION, AppendResponseDecoder.BLOCK_LENGTH)
                .group(0, MessageShape.block(AppendResponseDecoder.TermStartsDecoder.sbeBlockLength())))
            .message(schema, TimeoutNowDecoder.TEMPLATE_ID, MessageShape.block(TimeoutNowDecoder.BLOCK_LENGTH))
            .message(schema, InstallSnapshotDecoder.TEMPLATE_ID,
                since3(44, 76).grownTo(IDENTITY_VERSION, InstallSnapshotDecoder.BLOCK_LENGTH).varData(MAX_DATA_LENGTH))
            .message(schema, InstallSnapshotResponseDecoder.TEMPLATE_ID,
                since3(29, 37).grownTo(IDENTITY_VERSION, InstallSnapshotResponseDecoder.BLOCK_LENGTH))
            .message(schema, ConfigurationNoticeDecoder.TEMPLATE_ID,
                MessageShape.block(36).grownTo(IDENTITY_VERSION, ConfigurationNoticeDecoder.BLOCK_LENGTH));
    }

    private static void tools(final MessageShapes shapes, final int schema)
    {
        shapes
            .message(schema, ClientAppendDecoder.TEMPLATE_ID, MessageShape.block(ClientAppendDecoder.BLOCK_LENGTH)
                .varData(MAX_DATA_LENGTH))
            .message(schema, ClientAppendAckDecoder.TEMPLATE_ID, block(ClientAppendAckDecoder.BLOCK_LENGTH))
            .message(schema, StatusRequestDecoder.TEMPLATE_ID, block(StatusRequestDecoder.BLOCK_LENGTH))
            // Version 2 added the leader's view of its peers; version 3 the membership.
            .message(schema, StatusResponseDecoder.TEMPLATE_ID, since3(73, StatusResponseDecoder.BLOCK_LENGTH)
                .group(2, MessageShape.block(StatusResponseDecoder.PeersDecoder.sbeBlockLength())))
            .message(schema, TransferLeadershipDecoder.TEMPLATE_ID, block(TransferLeadershipDecoder.BLOCK_LENGTH))
            .message(schema, SnapshotRequestDecoder.TEMPLATE_ID, block(SnapshotRequestDecoder.BLOCK_LENGTH))
            .message(schema, ShutdownRequestDecoder.TEMPLATE_ID, block(ShutdownRequestDecoder.BLOCK_LENGTH))
            .message(schema, SuspendRequestDecoder.TEMPLATE_ID, block(SuspendRequestDecoder.BLOCK_LENGTH))
            .message(schema, ErrorsRequestDecoder.TEMPLATE_ID, block(ErrorsRequestDecoder.BLOCK_LENGTH))
            .message(schema, ErrorsResponseDecoder.TEMPLATE_ID, block(ErrorsResponseDecoder.BLOCK_LENGTH)
                .group(0, MessageShape.block(ErrorsResponseDecoder.ErrorsDecoder.sbeBlockLength())
                    .varData(MAX_DATA_LENGTH).varData(MAX_DATA_LENGTH)))
            .message(schema, BackupRequestDecoder.TEMPLATE_ID, block(BackupRequestDecoder.BLOCK_LENGTH))
            .message(schema, BackupChunkDecoder.TEMPLATE_ID, block(BackupChunkDecoder.BLOCK_LENGTH)
                .varData(MAX_DATA_LENGTH))
            .message(schema, PromoteRequestDecoder.TEMPLATE_ID, block(PromoteRequestDecoder.BLOCK_LENGTH))
            .message(schema, PromoteResponseDecoder.TEMPLATE_ID, block(PromoteResponseDecoder.BLOCK_LENGTH - 8)
                .grownTo(IDENTITY_VERSION, PromoteResponseDecoder.BLOCK_LENGTH).varData(MAX_DATA_LENGTH))
            .message(schema, MembershipChangeRequestDecoder.TEMPLATE_ID,
                block(MembershipChangeRequestDecoder.BLOCK_LENGTH));
    }

    private static MessageShape block(final int blockLength)
    {
        return MessageShape.block(blockLength);
    }

    /** A block whose last fields (the membership epoch, and what follows it) came with version 3. */
    private static MessageShape since3(final int before, final int from3)
    {
        return MessageShape.block(before).grownTo(MEMBERSHIP_VERSION, from3);
    }
}
