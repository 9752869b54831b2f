package io.lockstep.examples.matching;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class OrderBookTest
{
    private final List<String> reports = new ArrayList<>();
    private final ExecutionListener recorder = new ExecutionListener()
    {
        public void onAccepted(final long orderId, final Side side, final long price, final long quantity)
        {
            reports.add("accepted " + orderId + " " + side + " " + quantity + "@" + price);
        }

        public void onFill(final long orderId, final long price, final long quantity, final long leaves,
            final long contra)
        {
            reports.add("fill " + orderId + " " + quantity + "@" + price + " leaves " + leaves + " vs " + contra);
        }

        public void onCancelled(final long orderId, final long cancelledQuantity)
        {
            reports.add("cancelled " + orderId + " " + cancelledQuantity);
        }

        public void onReplaced(final long orderId, final long price, final long leavesQuantity)
        {
            reports.add("replaced " + orderId + " " + leavesQuantity + "@" + price);
        }

        public void onRejected(final long orderId, final RejectReason reason)
        {
            reports.add("rejected " + orderId + " " + reason);
        }
    };
    private final OrderBook book = new OrderBook(1000, recorder);

    @Test
    void aCrossingOrderTradesAtTheRestingPriceAndRestsTheRest()
    {
        book.newOrder(1, Side.SELL, 101, 5);
        reports.clear();
        book.newOrder(2, Side.BUY, 103, 8);
        assertEquals(List.of(
            "accepted 2 BUY 8@103",
            "fill 2 5@101 leaves 3 vs 1",
            "fill 1 5@101 leaves 0 vs 2"), reports);
        assertEquals(103, book.bestBid());
        assertEquals(0, book.bestAsk());
        assertEquals(3, book.leavesQuantity(2));
    }

    @Test
    void betterPriceFirstThenEarlierOrderFirst()
    {
        book.newOrder(1, Side.SELL, 102, 1);
        book.newOrder(2, Side.SELL, 101, 1);
        book.newOrder(3, Side.SELL, 101, 1);
        reports.clear();
        book.newOrder(4, Side.BUY, 102, 3);
        assertEquals(List.of(
            "accepted 4 BUY 3@102",
            "fill 4 1@101 leaves 2 vs 2",
            "fill 2 1@101 leaves 0 vs 4",
            "fill 4 1@101 leaves 1 vs 3",
            "fill 3 1@101 leaves 0 vs 4",
            "fill 4 1@102 leaves 0 vs 1",
            "fill 1 1@102 leaves 0 vs 4"), reports);
        assertEquals(0, book.orderCount());
    }

    @Test
    void aNonCrossingOrderRests()
    {
        book.newOrder(1, Side.BUY, 99, 10);
        book.newOrder(2, Side.SELL, 100, 10);
        assertEquals(99, book.bestBid());
        assertEquals(100, book.bestAsk());
        assertEquals(2, book.orderCount());
    }

    @Test
    void cancelRemovesAndUnknownIsRejected()
    {
        book.newOrder(1, Side.BUY, 99, 10);
        book.cancel(1);
        book.cancel(1);
        assertEquals(List.of("accepted 1 BUY 10@99", "cancelled 1 10", "rejected 1 UNKNOWN_ORDER"), reports);
        assertEquals(0, book.bestBid());
    }

    @Test
    void reducingQuantityKeepsPriorityAndRepricingLosesIt()
    {
        book.newOrder(1, Side.SELL, 100, 10);
        book.newOrder(2, Side.SELL, 100, 10);
        book.replace(1, 100, 4);
        reports.clear();
        book.newOrder(3, Side.BUY, 100, 1);
        assertEquals("fill 1 1@100 leaves 3 vs 3", reports.get(2), "order 1 kept its place after shrinking");

        book.replace(1, 100, 50);
        reports.clear();
        book.newOrder(4, Side.BUY, 100, 1);
        assertEquals("fill 2 1@100 leaves 9 vs 4", reports.get(2), "order 1 went to the back after growing");
    }

    @Test
    void aReplaceThatCrossesTradesAtOnce()
    {
        book.newOrder(1, Side.BUY, 99, 5);
        book.newOrder(2, Side.SELL, 101, 5);
        reports.clear();
        book.replace(1, 101, 5);
        assertEquals(List.of("replaced 1 5@101", "fill 1 5@101 leaves 0 vs 2", "fill 2 5@101 leaves 0 vs 1"), reports);
        assertEquals(0, book.orderCount());
    }

    @Test
    void badRequestsAreRejectedAndChangeNothing()
    {
        book.newOrder(1, Side.BUY, 99, 0);
        book.newOrder(2, Side.BUY, 0, 5);
        book.newOrder(3, Side.BUY, 99, 5);
        book.newOrder(3, Side.BUY, 99, 5);
        book.replace(3, 99, -1);
        book.replace(9, 99, 1);
        assertEquals(List.of("rejected 1 INVALID_QUANTITY", "rejected 2 INVALID_PRICE", "accepted 3 BUY 5@99",
            "rejected 3 DUPLICATE_ORDER_ID", "rejected 3 INVALID_QUANTITY", "rejected 9 UNKNOWN_ORDER"), reports);
        assertEquals(1, book.orderCount());

        final OrderBook tiny = new OrderBook(1, recorder);
        tiny.newOrder(1, Side.BUY, 10, 1);
        reports.clear();
        tiny.newOrder(2, Side.BUY, 10, 1);
        assertEquals(List.of("rejected 2 BOOK_FULL"), reports);
    }

    @Test
    void theSameRequestsGiveTheSameStateHashAndReports()
    {
        final List<String> first = new ArrayList<>();
        final List<String> second = new ArrayList<>();
        assertEquals(play(42, first), play(42, second));
        assertEquals(first, second);
        assertNotEquals(play(42, new ArrayList<>()), play(43, new ArrayList<>()));
    }

    /** Random orders, cancels and replaces from a seed; quantity is conserved: what trades leaves both sides. */
    private long play(final long seed, final List<String> out)
    {
        reports.clear();
        final OrderBook b = new OrderBook(10_000, recorder);
        final Random random = new Random(seed);
        for (long id = 1; id <= 5000; id++)
        {
            final int op = random.nextInt(10);
            if (op < 7)
            {
                b.newOrder(id, random.nextBoolean() ? Side.BUY : Side.SELL, 95 + random.nextInt(11), 1
                    + random.nextInt(20));
            }
            else if (op < 9)
            {
                b.cancel(1 + random.nextInt((int)id));
            }
            else
            {
                b.replace(1 + random.nextInt((int)id), 95 + random.nextInt(11), 1 + random.nextInt(20));
            }
            if (b.bestBid() != 0 && b.bestAsk() != 0)
            {
                assertEquals(true, b.bestBid() < b.bestAsk(), "the book never stays crossed");
            }
        }
        out.addAll(reports);
        return b.stateHash();
    }
}
