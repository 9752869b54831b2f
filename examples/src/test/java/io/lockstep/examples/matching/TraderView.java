package io.lockstep.examples.matching;

import io.lockstep.examples.matching.codecs.ExecType;
import io.lockstep.examples.matching.codecs.ExecutionReportDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderEncoder;
import io.lockstep.examples.matching.codecs.NewOrderEncoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * What a trader sees of the matching engine, written as a user of Lockstep would: new orders out, execution reports
 * in, and the one rule a trader cannot live without checked on every report: each order is answered (accepted or
 * rejected) exactly once, however many failovers happen in between.
 */
final class TraderView
{
    private final long idBase;
    private final UnsafeBuffer out = new UnsafeBuffer(new byte[64]);
    private final NewOrderEncoder newOrder = new NewOrderEncoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final ExecutionReportDecoder report = new ExecutionReportDecoder();
    private final Map<Long, Integer> answers = new HashMap<>();
    private long next;

    /**
     * @param trader numbers this trader's order ids apart from the others'.
     */
    TraderView(final int trader)
    {
        this.idBase = trader * 1_000_000_000L;
    }

    /**
     * Encode the next order (random side, price around 100, quantity 1-10).
     *
     * @return the buffer, holding the message from 0.
     */
    UnsafeBuffer nextOrder(final Random random)
    {
        newOrder.wrapAndApplyHeader(out, 0, headerEncoder).clientOrderId(idBase + next).instrument(1)
            .side(random.nextBoolean() ? OrderSide.BUY : OrderSide.SELL).price(95 + random.nextInt(11))
            .quantity(1 + random.nextInt(10));
        return out;
    }

    int orderLength()
    {
        return MessageHeaderEncoder.ENCODED_LENGTH + newOrder.encodedLength();
    }

    /** The order from the last {@link #nextOrder} was taken by the client (it will be sent until acknowledged). */
    void sent()
    {
        next++;
    }

    void onReport(final DirectBuffer buffer, final int offset)
    {
        header.wrap(buffer, offset);
        if (header.templateId() != ExecutionReportDecoder.TEMPLATE_ID)
        {
            return;
        }
        report.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final ExecType type = report.execType();
        if (ExecType.ACCEPTED == type || ExecType.REJECTED == type)
        {
            final long id = report.clientOrderId();
            if (id >= idBase && id < idBase + 1_000_000_000L)
            {
                final int seen = answers.merge(id, 1, Integer::sum);
                if (seen > 1)
                {
                    throw new AssertionError("order " + id + " answered " + seen + " times");
                }
            }
        }
    }

    /** @return orders sent so far. */
    long sentCount()
    {
        return next;
    }

    /** @return true once every order sent was answered (exactly once: {@link #onReport} checks the once). */
    boolean allAnswered()
    {
        return answers.size() == next;
    }
}
