package io.lockstep.consensus.node;

/**
 * Classes a member loads and initialises before its duty cycle starts, because loading them later, under load, throws
 * away compiled code of the duty cycle or costs the member's thread milliseconds.
 * <p>
 * The JIT compiles the hot loop knowing only the classes loaded so far: a path that reaches a class not yet loaded
 * becomes a trap, and loading a class can invalidate what was compiled on the assumption that it did not exist. Both
 * happened under load (seen with {@code -Xlog:jit+compilation,class+load}):
 * <ul>
 *     <li>The queue nodes of {@code AbstractQueuedSynchronizer} load the first time some lock is contended, which
 *     was the first segment rollover handing a segment to the background sync. At that moment
 *     {@code AgentRunner.doWork}, {@code ConsensusAgent.doWork}, {@code ServiceMember.doWork} and
 *     {@code TcpTransport.read} (now {@code ConnectionReader.read}) were made not entrant on every member, and
 *     2,000-4,700 messages in the next two seconds took over 1 ms.</li>
 *     <li>{@code ClusterAction} loads at the first snapshot entry, and the leader's {@code AgentRunner.doWork} was
 *     made not entrant there.</li>
 *     <li>The rest load at the first snapshot, purge or rollover, each a class read and verified on that path.</li>
 * </ul>
 * With this list, a 30 s run at 10k msg/s with 16 MiB snapshots (rollovers, snapshots, retention, a purge) loads no
 * class after start except on the purge thread, and no compiled method is made not entrant.
 */
final class PreloadedClasses
{
    static final String[] NAMES = {
        // The JDK's lock queue nodes (java.base in 17 and 25).
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ExclusiveNode",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$SharedNode",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode",
        // The first snapshot.
        "io.lockstep.consensus.log.ClusterAction",
        "org.agrona.collections.ArrayUtil",
        "io.lockstep.archive.SnapshotFileWriter",
        "io.lockstep.archive.SnapshotInfo",
        "io.lockstep.archive.codecs.SnapshotHeaderEncoder",
        "io.lockstep.archive.codecs.SnapshotTrailerEncoder",
        "io.lockstep.archive.codecs.RecordingType",
        "io.lockstep.archive.codecs.RecordingLogHeaderEncoder",
        "io.lockstep.archive.codecs.RecordingLogEntryEncoder",
        "io.lockstep.consensus.storage.FileSnapshotStorage$SnapshotStoreSize",
        // The first snapshot retention drops.
        "io.lockstep.consensus.storage.FileSnapshotStorage$DeleteTask",
        // The first purge.
        "io.lockstep.consensus.storage.ArchiveRaftLog$PurgeTask",
        "io.lockstep.consensus.codecs.LogBaseEncoder",
        // The first rollover.
        "io.lockstep.archive.BackgroundSync$Retired",
        "org.agrona.IoUtil",
    };

    private PreloadedClasses()
    {
    }

    /**
     * @return how many of {@link #NAMES} were found (all of them on the JDKs this project supports).
     */
    static int load()
    {
        int loaded = 0;
        for (final String name : NAMES)
        {
            try
            {
                Class.forName(name, true, PreloadedClasses.class.getClassLoader());
                loaded++;
            }
            catch (final ClassNotFoundException ignore)
            {
                // A JDK whose internals differ: nothing to preload, and nothing wrong.
            }
        }
        return loaded;
    }
}
