package io.lockstep.consensus.service;

import org.agrona.DirectBuffer;

import java.util.ArrayDeque;

/**
 * Messages a service offered into the log ({@code Cluster.offer}) that have not been applied yet: replicated state,
 * changed only while applying entries, so every member holds the same queue. Each message gets the next id; the
 * leader appends every queued message as a service-message entry carrying its id; applying the entry with the head's
 * id delivers it and removes it, and an entry with an id already applied is a duplicate (appended again by a new
 * leader) and is ignored. So a service message is applied exactly once even when the leader that should have
 * appended it dies: the next leader has the same queue and appends what is left.
 */
public final class ServiceMessageQueue
{
    private record Message(long id, byte[] payload)
    {
    }

    private final int maxMessages;
    private final ArrayDeque<Message> queue = new ArrayDeque<>();
    private long nextId;

    /**
     * @param maxMessages bound on queued messages; an offer beyond it is refused (the same on every member).
     */
    public ServiceMessageQueue(final int maxMessages)
    {
        this.maxMessages = maxMessages;
    }

    /**
     * @return the message's id, or -1 if the queue is full.
     */
    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        if (queue.size() >= maxMessages)
        {
            return -1;
        }
        final byte[] payload = new byte[length];
        buffer.getBytes(offset, payload);
        queue.addLast(new Message(nextId, payload));
        return nextId++;
    }

    /**
     * Apply a service-message entry.
     *
     * @return true if it is the head (deliver it); false if it was applied before (a duplicate).
     * @throws IllegalStateException if it is beyond the head: a leader skipped a message, which cannot happen.
     */
    public boolean apply(final long messageId)
    {
        final Message head = queue.peekFirst();
        if (null == head || messageId < head.id)
        {
            return false;
        }
        if (messageId > head.id)
        {
            throw new IllegalStateException("service message " + messageId + " applied before " + head.id);
        }
        queue.pollFirst();
        return true;
    }

    /** Visits queued messages. */
    @FunctionalInterface
    public interface MessageVisitor
    {
        /**
         * @return false to stop.
         */
        boolean visit(long id, byte[] payload);
    }

    /**
     * For the leader: visit queued messages with ids from the given one on, in order.
     */
    public void forEachFrom(final long fromId, final MessageVisitor visitor)
    {
        // The leader asks every duty cycle; when there is nothing to visit that must cost no iterator.
        if (queue.isEmpty() || queue.peekLast().id < fromId)
        {
            return;
        }
        for (final Message m : queue)
        {
            if (m.id >= fromId && !visitor.visit(m.id, m.payload))
            {
                return;
            }
        }
    }

    /**
     * @return the id of the oldest queued message, or the next id when empty.
     */
    long nextId()
    {
        return nextId;
    }

    /**
     * Start from a snapshot: the queue must be empty; messages are then added with {@link #restoreMessage}.
     */
    void restoreNextId(final long nextId)
    {
        if (!queue.isEmpty())
        {
            throw new IllegalStateException("restore into a queue that holds messages");
        }
        this.nextId = nextId;
    }

    void restoreMessage(final long id, final DirectBuffer buffer, final int offset, final int length)
    {
        if (id >= nextId || (!queue.isEmpty() && id <= queue.peekLast().id) || queue.size() >= maxMessages)
        {
            throw new IllegalStateException("snapshot service message " + id + " does not fit the queue");
        }
        final byte[] payload = new byte[length];
        buffer.getBytes(offset, payload);
        queue.addLast(new Message(id, payload));
    }

    public long headId()
    {
        return queue.isEmpty() ? nextId : queue.peekFirst().id;
    }

    public int size()
    {
        return queue.size();
    }

    /**
     * @return a hash of the queue, for comparing members.
     */
    public long stateHash()
    {
        return nextId * 31 + queue.size();
    }
}
