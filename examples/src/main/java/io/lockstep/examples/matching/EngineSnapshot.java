package io.lockstep.examples.matching;

import io.lockstep.cluster.SnapshotReader;
import io.lockstep.cluster.SnapshotWriter;
import io.lockstep.examples.matching.codecs.BookSnapshotHeaderDecoder;
import io.lockstep.examples.matching.codecs.BookSnapshotHeaderEncoder;
import io.lockstep.examples.matching.codecs.BookSnapshotOrdersDecoder;
import io.lockstep.examples.matching.codecs.BookSnapshotOrdersEncoder;
import io.lockstep.examples.matching.codecs.EngineSnapshotHeaderDecoder;
import io.lockstep.examples.matching.codecs.EngineSnapshotHeaderEncoder;
import io.lockstep.examples.matching.codecs.MessageHeaderDecoder;
import io.lockstep.examples.matching.codecs.MessageHeaderEncoder;
import io.lockstep.examples.matching.codecs.OrderSide;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.IntFunction;

/**
 * The matching engine's snapshot: a header with the number of books, then per book (by instrument id) a header
 * and its resting orders in priority order, up to {@link #ORDERS_PER_FRAGMENT} to a fragment. Encoding goes
 * straight from the book into one reused buffer: with a million resting orders this is the whole of the engine's
 * pause for a snapshot.
 */
final class EngineSnapshot
{
    static final int ORDERS_PER_FRAGMENT = 2048;

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final EngineSnapshotHeaderEncoder engineHeaderEncoder = new EngineSnapshotHeaderEncoder();
    private final EngineSnapshotHeaderDecoder engineHeaderDecoder = new EngineSnapshotHeaderDecoder();
    private final BookSnapshotHeaderEncoder bookHeaderEncoder = new BookSnapshotHeaderEncoder();
    private final BookSnapshotHeaderDecoder bookHeaderDecoder = new BookSnapshotHeaderDecoder();
    private final BookSnapshotOrdersEncoder ordersEncoder = new BookSnapshotOrdersEncoder();
    private final BookSnapshotOrdersDecoder ordersDecoder = new BookSnapshotOrdersDecoder();
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64 + ORDERS_PER_FRAGMENT *
        (BookSnapshotOrdersEncoder.OrdersEncoder.sbeBlockLength())]);
    private BookSnapshotOrdersEncoder.OrdersEncoder group;
    private int inGroup;
    private int groupLimit;
    private SnapshotWriter writer;

    void write(final SnapshotWriter writer, final Int2ObjectHashMap<OrderBook> books)
    {
        this.writer = writer;
        final int[] ids = books.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        final int length = engineHeaderEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder).bookCount(ids.length)
            .encodedLength();
        writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + length);
        for (final int id : ids)
        {
            final OrderBook book = books.get(id);
            final int headerLength = bookHeaderEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
                .instrument(id).orderCount(book.orderCount()).encodedLength();
            writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + headerLength);
            final int total = book.orderCount();
            startGroup(total);
            final int[] remaining = { total };
            book.forEachOrder((orderId, side, price, leaves) ->
            {
                if (inGroup == groupLimit)
                {
                    flushGroup();
                    startGroup(remaining[0]);
                }
                group.next().orderId(orderId).side(Side.BUY == side ? OrderSide.BUY : OrderSide.SELL).price(price)
                    .leaves(leaves);
                inGroup++;
                remaining[0]--;
            });
            if (groupLimit > 0)
            {
                flushGroup();
            }
        }
        this.writer = null;
    }

    private void startGroup(final int remaining)
    {
        groupLimit = Math.min(remaining, ORDERS_PER_FRAGMENT);
        inGroup = 0;
        if (groupLimit > 0)
        {
            group = ordersEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder).ordersCount(groupLimit);
        }
    }

    private void flushGroup()
    {
        writer.append(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + ordersEncoder.encodedLength());
    }

    /**
     * Load books from a snapshot into an empty engine.
     *
     * @param newBook makes the book for an instrument.
     */
    void read(final SnapshotReader reader, final Int2ObjectHashMap<OrderBook> books,
        final IntFunction<OrderBook> newBook)
    {
        final int[] state = new int[3];
        reader.readOne((b, o, l) ->
        {
            wrapHeader(b, o, EngineSnapshotHeaderDecoder.TEMPLATE_ID);
            engineHeaderDecoder.wrap(b, o + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                headerDecoder.version());
            state[0] = engineHeaderDecoder.bookCount();
        });
        for (int i = 0; i < state[0]; i++)
        {
            final OrderBook[] book = new OrderBook[1];
            reader.readOne((b, o, l) ->
            {
                wrapHeader(b, o, BookSnapshotHeaderDecoder.TEMPLATE_ID);
                bookHeaderDecoder.wrap(b, o + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                    headerDecoder.version());
                book[0] = newBook.apply(bookHeaderDecoder.instrument());
                books.put(bookHeaderDecoder.instrument(), book[0]);
                state[1] = bookHeaderDecoder.orderCount();
            });
            while (book[0].orderCount() < state[1])
            {
                reader.readOne((b, o, l) ->
                {
                    wrapHeader(b, o, BookSnapshotOrdersDecoder.TEMPLATE_ID);
                    ordersDecoder.wrap(b, o + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                        headerDecoder.version());
                    for (final BookSnapshotOrdersDecoder.OrdersDecoder order : ordersDecoder.orders())
                    {
                        book[0].restore(order.orderId(), OrderSide.BUY == order.side() ? Side.BUY : Side.SELL,
                            order.price(), order.leaves());
                    }
                });
            }
        }
    }

    private void wrapHeader(final DirectBuffer buffer, final int offset, final int templateId)
    {
        headerDecoder.wrap(buffer, offset);
        if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID || headerDecoder.templateId() != templateId)
        {
            throw new IllegalStateException("matching engine snapshot: expected template " + templateId + ", found " +
                "schema " + headerDecoder.schemaId() + " template " + headerDecoder.templateId());
        }
    }
}
