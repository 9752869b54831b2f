package io.lockstep.examples.matching;

import io.lockstep.cluster.ClientSession;
import io.lockstep.cluster.CloseReason;
import io.lockstep.cluster.Cluster;
import io.lockstep.cluster.ClusterRole;
import io.lockstep.cluster.ClusteredService;
import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.examples.matching.codecs.CancelOrderDecoder;
import io.lockstep.examples.matching.codecs.ExecType;
import io.lockstep.examples.matching.codecs.ExecutionReportEncoder;
import io.lockstep.examples.matching.codecs.MessageHeaderDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderEncoder;
import io.lockstep.examples.matching.codecs.NewOrderDecoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import io.lockstep.examples.matching.codecs.ReplaceOrderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A replicated matching engine: one {@link OrderBook} per instrument, orders from client sessions, execution reports
 * back to the session that owns each order (both sides of a fill). An order's id in the book is
 * {@code sessionId << 32 | clientOrderId}, so two clients' order ids never collide and a report finds its owner.
 */
public final class MatchingEngineService implements ClusteredService, ExecutionListener
{
    /** Bound on instruments, and on resting orders per instrument. */
    public static final int MAX_INSTRUMENTS = 1024;
    public static final int MAX_ORDERS_PER_BOOK = 1_000_000;

    private final Int2ObjectHashMap<OrderBook> books = new Int2ObjectHashMap<>();
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private final NewOrderDecoder newOrder = new NewOrderDecoder();
    private final CancelOrderDecoder cancelOrder = new CancelOrderDecoder();
    private final ReplaceOrderDecoder replaceOrder = new ReplaceOrderDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ExecutionReportEncoder report = new ExecutionReportEncoder();
    private final UnsafeBuffer out = new UnsafeBuffer(new byte[128]);
    private final EngineSnapshot snapshotCodec = new EngineSnapshot();
    private Cluster cluster;
    private int instrument;

    public void onStart(final Cluster cluster, final SnapshotReader snapshot)
    {
        this.cluster = cluster;
        if (null != snapshot)
        {
            snapshotCodec.read(snapshot, books, id -> new OrderBook(MAX_ORDERS_PER_BOOK, this));
        }
    }

    public void onSessionOpen(final ClientSession session, final long timestamp)
    {
    }

    public void onSessionClose(final ClientSession session, final long timestamp, final CloseReason reason)
    {
    }

    public void onSessionMessage(
        final ClientSession session, final long timestamp, final DirectBuffer buffer, final int offset,
            final int length)
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return;
        }
        header.wrap(buffer, offset);
        if (header.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
        {
            return;
        }
        final int body = offset + MessageHeaderDecoder.ENCODED_LENGTH;
        final long owner = session.id() << 32;
        switch (header.templateId())
        {
            case NewOrderDecoder.TEMPLATE_ID ->
            {
                newOrder.wrap(buffer, body, header.blockLength(), header.version());
                final OrderBook book = book(newOrder.instrument());
                if (null == book)
                {
                    onRejected(owner | newOrder.clientOrderId(), RejectReason.BOOK_FULL);
                    return;
                }
                book.newOrder(owner | newOrder.clientOrderId(),
                    OrderSide.BUY == newOrder.side() ? Side.BUY : Side.SELL, newOrder.price(), newOrder.quantity());
            }
            case CancelOrderDecoder.TEMPLATE_ID ->
            {
                cancelOrder.wrap(buffer, body, header.blockLength(), header.version());
                final OrderBook book = book(cancelOrder.instrument());
                if (null != book)
                {
                    book.cancel(owner | cancelOrder.clientOrderId());
                }
            }
            case ReplaceOrderDecoder.TEMPLATE_ID ->
            {
                replaceOrder.wrap(buffer, body, header.blockLength(), header.version());
                final OrderBook book = book(replaceOrder.instrument());
                if (null != book)
                {
                    book.replace(owner | replaceOrder.clientOrderId(), replaceOrder.price(), replaceOrder.quantity());
                }
            }
            default ->
            {
            }
        }
    }

    private OrderBook book(final int instrumentId)
    {
        instrument = instrumentId;
        OrderBook book = books.get(instrumentId);
        if (null == book && books.size() < MAX_INSTRUMENTS)
        {
            book = new OrderBook(MAX_ORDERS_PER_BOOK, this);
            books.put(instrumentId, book);
        }
        return book;
    }

    public void onAccepted(final long orderId, final Side side, final long price, final long quantity)
    {
        send(orderId, ExecType.ACCEPTED, price, quantity, quantity, 0);
    }

    public void onFill(final long orderId, final long price, final long quantity, final long leavesQuantity,
        final long contraOrderId)
    {
        send(orderId, ExecType.FILL, price, quantity, leavesQuantity, 0);
    }

    public void onCancelled(final long orderId, final long cancelledQuantity)
    {
        send(orderId, ExecType.CANCELLED, 0, cancelledQuantity, 0, 0);
    }

    public void onReplaced(final long orderId, final long price, final long leavesQuantity)
    {
        send(orderId, ExecType.REPLACED, price, 0, leavesQuantity, 0);
    }

    public void onRejected(final long orderId, final RejectReason reason)
    {
        send(orderId, ExecType.REJECTED, 0, 0, 0, reason.ordinal() + 1);
    }

    private void send(
        final long orderId, final ExecType type, final long price, final long quantity, final long leaves,
        final int rejectReason)
    {
        final ClientSession owner = cluster.getClientSession(orderId >>> 32);
        if (null == owner)
        {
            return;
        }
        final int length = report.wrapAndApplyHeader(out, 0, headerEncoder)
            .clientOrderId(orderId & 0xFFFF_FFFFL).instrument(instrument).execType(type).price(price).quantity(quantity)
            .leavesQuantity(leaves).rejectReason((short)rejectReason).encodedLength();
        owner.offer(out, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
    }

    public void onServiceMessage(final long timestamp, final DirectBuffer buffer, final int offset, final int length)
    {
        // The engine offers none.
    }

    public void onTimerEvent(final long correlationId, final long timestamp)
    {
    }

    public void onTakeSnapshot(final SnapshotWriter writer)
    {
        snapshotCodec.write(writer, books);
    }

    public void onRoleChange(final ClusterRole newRole)
    {
    }

    public void onTerminate(final Cluster cluster)
    {
    }

    /**
     * @return a hash of every book: equal on replicas at the same position.
     */
    public long stateHash()
    {
        long h = 17;
        final int[] ids = books.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        for (final int id : ids)
        {
            h = h * 31 + id;
            h = h * 31 + books.get(id).stateHash();
        }
        return h;
    }
}
