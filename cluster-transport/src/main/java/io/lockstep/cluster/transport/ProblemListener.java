package io.lockstep.cluster.transport;

/**
 * Hears why a connection was refused or dropped (for a member's error log and counters); called on the polling
 * thread of the transport that refused it.
 */
@FunctionalInterface
public interface ProblemListener
{
    void onProblem(String problem);

    /**
     * @param kind    {@code identity} for a connection that claimed to be a member or asked to be trusted as a tool
     *                and did not prove it; {@code member-replaced} for a member's connection replaced by a new one;
     *                {@code tls} for a link's TLS files; {@code connection} for everything else (garbage, bounds,
     *                timeouts).
     * @param problem why, naming the peer. It may quote what the peer sent, cut but not escaped: print it through
     *                {@link PrintableText#of(String)}.
     */
    default void onProblem(final String kind, final String problem)
    {
        onProblem(problem);
    }
}
