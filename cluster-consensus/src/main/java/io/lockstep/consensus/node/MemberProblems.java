package io.lockstep.consensus.node;

import io.lockstep.cluster.transport.ProblemListener;
import io.lockstep.consensus.MemberErrors;
import io.lockstep.consensus.MemberMetrics;

/**
 * Where the transport's refusals go on a member: its error log ({@code tool errors}) and its counters, on the member
 * thread that polls.
 */
final class MemberProblems implements ProblemListener
{
    private final MemberMetrics metrics;
    private final MemberErrors errors;

    MemberProblems(final MemberMetrics metrics, final MemberErrors errors)
    {
        this.metrics = metrics;
        this.errors = errors;
    }

    public void onProblem(final String problem)
    {
        onProblem("connection", problem);
    }

    public void onProblem(final String kind, final String problem)
    {
        if (!"tls".equals(kind))
        {
            // A TLS file that does not reload refuses no connection: the files loaded before stay in use.
            metrics.increment(MemberMetrics.CONNECTIONS_REFUSED);
        }
        // Identity refusals (wrong proofs, claimed ids) are a kind of their own, so that a flood of garbage
        // connections cannot push them out of the error log.
        errors.record(kind, problem);
    }
}
