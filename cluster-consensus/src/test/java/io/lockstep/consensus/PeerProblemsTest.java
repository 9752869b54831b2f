package io.lockstep.consensus;

import io.lockstep.cluster.transport.LineBudget;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PeerProblemsTest
{
    private long nowNs = 1_000_000_000L;
    private final MemberErrors errors = new MemberErrors(() -> nowNs, new MemberMetrics());
    private final PeerProblems problems = new PeerProblems(2, errors, () -> nowNs);

    @Test
    void everyProblemIsRecordedButOnlyASecondsBudgetOfLinesIsWritten()
    {
        final int reports = LineBudget.LINES_PER_SECOND + 40;
        for (int i = 0; i < reports; i++)
        {
            problems.report("version", "dropped a message from member 1: schema 7 version " + (i + 9));
            nowNs += 1_000;
        }
        assertEquals(reports, errors.total(), "the error log counts every one");
        assertEquals(1, errors.recent().size(), "as one error: they differ only in their numbers");
        assertEquals(40, problems.heldBack(), "the lines past the second's budget are held back");

        problems.reportIfOver(nowNs);
        assertEquals(40, problems.heldBack(), "the second is not over yet");
        nowNs += TimeUnit.SECONDS.toNanos(1);
        problems.reportIfOver(nowNs);
        assertEquals(0, problems.heldBack(), "told once the second is over, without another problem");
    }
}
