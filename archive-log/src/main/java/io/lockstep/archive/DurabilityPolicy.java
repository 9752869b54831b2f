package io.lockstep.archive;

/**
 * What an append batch must reach before its position is reported durable.
 */
public enum DurabilityPolicy
{
    /**
     * Handed to the operating system's page cache: survives a crash of the process, not of the machine. Safety comes
     * from the quorum holding the data on other machines (Aeron Cluster's default).
     */
    NONE,

    /**
     * Each append batch is written with one write and made durable with one {@code fdatasync} before its position is
     * reported durable: group commit. Survives a crash of the machine.
     */
    BATCH
}
