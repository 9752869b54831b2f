package io.lockstep.consensus.node;

/**
 * JDK classes a member loads before its duty cycle starts, because loading them later, under load, throws away the
 * compiled duty cycle.
 * <p>
 * The queue nodes of {@code AbstractQueuedSynchronizer} are loaded the first time some lock is contended. Until then
 * the JIT compiles the lock paths inlined into the member's hot loop (socket reads, executor hand-offs) knowing
 * only the node classes loaded so far; the first contention, which is the first segment rollover handing a segment to
 * the background sync, invalidates every method that inlined them. Seen with {@code -Xlog:jit+compilation}: at
 * that moment {@code AgentRunner.doWork}, {@code ConsensusAgent.doWork}, {@code ServiceMember.doWork} and
 * {@code TcpTransport.read} were made not entrant on every member, and 2,000-4,700 messages in the next two seconds
 * took over 1 ms at 10k msg/s.
 */
final class PreloadedClasses
{
    private static final String[] NAMES = {
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ExclusiveNode",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$SharedNode",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode",
    };

    private PreloadedClasses()
    {
    }

    static void load()
    {
        for (final String name : NAMES)
        {
            try
            {
                Class.forName(name);
            }
            catch (final ClassNotFoundException ignore)
            {
                // Another JDK's internals: nothing to preload, and nothing wrong.
            }
        }
    }
}
