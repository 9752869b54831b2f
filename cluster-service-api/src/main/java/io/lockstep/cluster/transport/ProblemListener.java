package io.lockstep.cluster.transport;

/**
 * Hears why a connection was refused or dropped (for a member's error log and counters); called on the polling
 * thread of the transport that refused it.
 */
@FunctionalInterface
public interface ProblemListener
{
    void onProblem(String problem);
}
