package io.lockstep.testkit;

import io.lockstep.consensus.tool.AdminClient;

import java.time.Duration;
import java.util.Map;

/**
 * The check every failover test ends with: every member answers, all applied the same log to the same position,
 * and all report the same state hash there.
 */
final class Replicas
{
    private Replicas()
    {
    }

    static Map<Integer, AdminClient.Status> assertAgree(final AdminClient admin, final Duration timeout)
    {
        final Map<Integer, AdminClient.Status> converged = admin.awaitConverged(timeout.toMillis());
        if (null == converged)
        {
            throw new AssertionError("members did not converge within " + timeout + ": " + admin.status(1000));
        }
        final long hashes = converged.values().stream().map(AdminClient.Status::stateHash).distinct().count();
        final long applied = converged.values().stream().map(AdminClient.Status::appliedPosition).distinct().count();
        if (hashes != 1 || applied != 1)
        {
            throw new AssertionError("replicas disagree: " + converged);
        }
        return converged;
    }
}
