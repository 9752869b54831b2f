package io.lockstep.archive;

/**
 * A complete, durable snapshot in a {@link SnapshotStore}.
 *
 * @param location    name of the snapshot in the store.
 * @param serviceId   service the snapshot belongs to.
 * @param term        term at the log position.
 * @param logPosition log position the snapshot covers.
 * @param timestamp   log time at the snapshot.
 * @param length      bytes of the snapshot file.
 */
public record SnapshotInfo(String location, int serviceId, long term, long logPosition, long timestamp, long length)
{
}
