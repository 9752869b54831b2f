package io.lockstep.examples.matching;

import org.agrona.collections.Long2ObjectHashMap;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A limit order book for one instrument, with price-time priority: the best price trades first, and at one price
 * the earliest order first. An incoming order trades at the resting order's price for as long as it crosses, and
 * any rest joins the book. Deterministic: the same requests in the same order give the same reports and the same
 * {@link #stateHash()}, which is what replicas need.
 * <p>
 * Replace: reducing quantity at the same price keeps time priority; any other change (a new price, more quantity)
 * is a cancel and a new order, which may trade at once.
 */
public final class OrderBook
{
    private static final class Order
    {
        final long id;
        final Side side;
        long price;
        long leaves;

        Order(final long id, final Side side, final long price, final long leaves)
        {
            this.id = id;
            this.side = side;
            this.price = price;
            this.leaves = leaves;
        }
    }

    private final int maxOrders;
    private final ExecutionListener listener;
    /** Price to FIFO of orders; bids iterate highest first, asks lowest first. */
    private final TreeMap<Long, ArrayDeque<Order>> bids = new TreeMap<>((a, b) -> Long.compare(b, a));
    private final TreeMap<Long, ArrayDeque<Order>> asks = new TreeMap<>();
    private final Long2ObjectHashMap<Order> ordersById = new Long2ObjectHashMap<>();

    /**
     * @param maxOrders bound on resting orders: beyond it new orders are rejected, not stored.
     * @param listener  receives execution reports.
     */
    public OrderBook(final int maxOrders, final ExecutionListener listener)
    {
        this.maxOrders = maxOrders;
        this.listener = listener;
    }

    /**
     * Enter a limit order: it trades while it crosses, then the rest (if any) rests.
     */
    public void newOrder(final long orderId, final Side side, final long price, final long quantity)
    {
        if (quantity <= 0)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.INVALID_QUANTITY);
            return;
        }
        if (price <= 0)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.INVALID_PRICE);
            return;
        }
        if (ordersById.containsKey(orderId))
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.DUPLICATE_ORDER_ID);
            return;
        }
        if (ordersById.size() >= maxOrders)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.BOOK_FULL);
            return;
        }
        listener.onAccepted(orderId, side, price, quantity);
        final long leaves = match(orderId, side, price, quantity);
        if (leaves > 0)
        {
            rest(new Order(orderId, side, price, leaves));
        }
    }

    public void cancel(final long orderId)
    {
        final Order order = ordersById.get(orderId);
        if (null == order)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.UNKNOWN_ORDER);
            return;
        }
        remove(order);
        listener.onCancelled(orderId, order.leaves);
    }

    /**
     * @param newPrice    the new limit price.
     * @param newQuantity the new open quantity.
     */
    public void replace(final long orderId, final long newPrice, final long newQuantity)
    {
        final Order order = ordersById.get(orderId);
        if (null == order)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.UNKNOWN_ORDER);
            return;
        }
        if (newQuantity <= 0)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.INVALID_QUANTITY);
            return;
        }
        if (newPrice <= 0)
        {
            listener.onRejected(orderId, ExecutionListener.RejectReason.INVALID_PRICE);
            return;
        }
        if (newPrice == order.price && newQuantity <= order.leaves)
        {
            order.leaves = newQuantity;
            listener.onReplaced(orderId, newPrice, newQuantity);
            return;
        }
        // Loses its place: out of the book, and in again as if new (it may trade now).
        remove(order);
        listener.onReplaced(orderId, newPrice, newQuantity);
        final long leaves = match(orderId, order.side, newPrice, newQuantity);
        if (leaves > 0)
        {
            order.price = newPrice;
            order.leaves = leaves;
            rest(order);
        }
    }

    /**
     * @return best bid price, or 0 if there is none.
     */
    public long bestBid()
    {
        return bids.isEmpty() ? 0 : bids.firstKey();
    }

    /**
     * @return best ask price, or 0 if there is none.
     */
    public long bestAsk()
    {
        return asks.isEmpty() ? 0 : asks.firstKey();
    }

    /**
     * @return resting orders.
     */
    public int orderCount()
    {
        return ordersById.size();
    }

    /**
     * @return open quantity of a resting order, or 0.
     */
    public long leavesQuantity(final long orderId)
    {
        final Order order = ordersById.get(orderId);
        return null == order ? 0 : order.leaves;
    }

    /**
     * @return a hash of the whole book in priority order: equal on replicas that applied the same requests.
     */
    public long stateHash()
    {
        long h = 0xcbf29ce484222325L;
        for (final TreeMap<Long, ArrayDeque<Order>> side : List.of(bids, asks))
        {
            for (final Map.Entry<Long, ArrayDeque<Order>> level : side.entrySet())
            {
                for (final Order o : level.getValue())
                {
                    h = (h ^ o.id) * 0x100000001b3L;
                    h = (h ^ o.price) * 0x100000001b3L;
                    h = (h ^ o.leaves) * 0x100000001b3L;
                    h = (h ^ o.side.ordinal()) * 0x100000001b3L;
                }
            }
        }
        return h;
    }

    /** Receives resting orders, in priority order. */
    @FunctionalInterface
    public interface OrderVisitor
    {
        void onOrder(long orderId, Side side, long price, long leaves);
    }

    /**
     * Visit every resting order in priority order: bids best price first, then asks best first, each price level
     * oldest first. Loading them with {@link #restore} in this order rebuilds the same book.
     */
    public void forEachOrder(final OrderVisitor visitor)
    {
        for (final TreeMap<Long, ArrayDeque<Order>> side : List.of(bids, asks))
        {
            for (final ArrayDeque<Order> level : side.values())
            {
                for (final Order o : level)
                {
                    visitor.onOrder(o.id, o.side, o.price, o.leaves);
                }
            }
        }
    }

    /**
     * Put back a resting order from a snapshot: it joins the back of its price level, with no matching and no
     * report (it rested when it was first entered).
     */
    public void restore(final long orderId, final Side side, final long price, final long leaves)
    {
        if (leaves <= 0 || price <= 0 || ordersById.containsKey(orderId) || ordersById.size() >= maxOrders)
        {
            throw new IllegalStateException("snapshot order " + orderId + " cannot rest in this book (leaves " +
                leaves + ", price " + price + ", " + ordersById.size() + " of " + maxOrders + " held)");
        }
        rest(new Order(orderId, side, price, leaves));
    }

    private long match(final long orderId, final Side side, final long price, final long quantity)
    {
        final TreeMap<Long, ArrayDeque<Order>> opposite = Side.BUY == side ? asks : bids;
        long leaves = quantity;
        while (leaves > 0 && !opposite.isEmpty())
        {
            final long bestPrice = opposite.firstKey();
            final boolean crosses = Side.BUY == side ? price >= bestPrice : price <= bestPrice;
            if (!crosses)
            {
                break;
            }
            final ArrayDeque<Order> level = opposite.get(bestPrice);
            final Iterator<Order> it = level.iterator();
            while (leaves > 0 && it.hasNext())
            {
                final Order resting = it.next();
                final long traded = Math.min(leaves, resting.leaves);
                leaves -= traded;
                resting.leaves -= traded;
                listener.onFill(orderId, bestPrice, traded, leaves, resting.id);
                listener.onFill(resting.id, bestPrice, traded, resting.leaves, orderId);
                if (0 == resting.leaves)
                {
                    it.remove();
                    ordersById.remove(resting.id);
                }
            }
            if (level.isEmpty())
            {
                opposite.remove(bestPrice);
            }
        }
        return leaves;
    }

    private void rest(final Order order)
    {
        final TreeMap<Long, ArrayDeque<Order>> book = Side.BUY == order.side ? bids : asks;
        book.computeIfAbsent(order.price, p -> new ArrayDeque<>()).addLast(order);
        ordersById.put(order.id, order);
    }

    private void remove(final Order order)
    {
        final TreeMap<Long, ArrayDeque<Order>> book = Side.BUY == order.side ? bids : asks;
        final ArrayDeque<Order> level = book.get(order.price);
        level.remove(order);
        if (level.isEmpty())
        {
            book.remove(order.price);
        }
        ordersById.remove(order.id);
    }
}
