package io.lockstep.consensus.node;

import io.lockstep.cluster.ClusteredService;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A member's service factory, watched: the instance it returns must not run in another member of this JVM. One
 * instance handed to three members (a factory {@code () -> engine} instead of {@code Engine::new}) would take every
 * entry three times, and nothing else would say so.
 */
final class ServiceInstances implements Supplier<ClusteredService>
{
    /** The instances the members of this JVM run now. Guarded by itself. */
    private static final Set<ClusteredService> RUNNING = Collections.newSetFromMap(new IdentityHashMap<>());

    private final Supplier<? extends ClusteredService> factory;
    private ClusteredService current;

    ServiceInstances(final Supplier<? extends ClusteredService> factory)
    {
        this.factory = factory;
    }

    /**
     * @return a new instance from the factory, now this member's.
     * @throws IllegalStateException if another member of this JVM runs that instance.
     */
    public ClusteredService get()
    {
        final ClusteredService next = factory.get();
        synchronized (RUNNING)
        {
            // The same instance for this member again is refused by the member itself, with its own reason.
            if (next != current)
            {
                if (!RUNNING.add(next))
                {
                    throw new IllegalStateException("the service factory returned an instance that another member " +
                        "of this JVM runs: it must return a new instance on every call (MyService::new), one per " +
                        "member");
                }
                if (null != current)
                {
                    RUNNING.remove(current);
                }
                current = next;
            }
        }
        return next;
    }

    /**
     * The member stopped: its instance may be used again.
     */
    void release()
    {
        synchronized (RUNNING)
        {
            if (null != current)
            {
                RUNNING.remove(current);
                current = null;
            }
        }
    }
}
