package io.lockstep.examples.matching;

/**
 * Receives execution reports as the order book produces them, in order. The matching engine service turns them
 * into egress to the owning client sessions.
 */
public interface ExecutionListener
{
    /** Why a request was refused. */
    enum RejectReason
    {
        UNKNOWN_ORDER,
        DUPLICATE_ORDER_ID,
        INVALID_QUANTITY,
        INVALID_PRICE,
        BOOK_FULL
    }

    void onAccepted(long orderId, Side side, long price, long quantity);

    /**
     * A trade: reported once for each side.
     *
     * @param orderId        the order that traded.
     * @param price          the trade price (the resting order's price).
     * @param quantity       quantity traded.
     * @param leavesQuantity what the order still has open.
     * @param contraOrderId  the order it traded with.
     */
    void onFill(long orderId, long price, long quantity, long leavesQuantity, long contraOrderId);

    void onCancelled(long orderId, long cancelledQuantity);

    void onReplaced(long orderId, long price, long leavesQuantity);

    void onRejected(long orderId, RejectReason reason);
}
