package io.lockstep.consensus;

import org.agrona.collections.LongArrayList;

/**
 * Where each term starts in the log. A leader starts its term with a new-term entry at the end of its log, so a
 * term's first frame sits at the same position in every log that holds the term: term starts are shared facts,
 * which is what lets a leader and a follower find the last position their logs agree on from term starts alone.
 * <p>
 * "The term at position P" means the term of the frame that ends at P (0 at the log's start).
 */
final class TermIndex
{
    private final LongArrayList terms = new LongArrayList();
    private final LongArrayList starts = new LongArrayList();

    /**
     * Note a frame of a term at a position; frames arrive in log order.
     */
    void onFrame(final long term, final long position)
    {
        final int last = terms.size() - 1;
        if (last >= 0 && terms.getLong(last) == term)
        {
            return;
        }
        if (last >= 0 && (term < terms.getLong(last) || position < starts.getLong(last)))
        {
            throw new IllegalStateException("term " + term + " at " + position + " after term " +
                terms.getLong(last) + " at " + starts.getLong(last));
        }
        terms.addLong(term);
        starts.addLong(position);
    }

    /**
     * @return term of the frame ending at the position, or 0 if no frame ends at or before it.
     */
    long termAt(final long position)
    {
        for (int i = terms.size() - 1; i >= 0; i--)
        {
            if (starts.getLong(i) < position)
            {
                return terms.getLong(i);
            }
        }
        return 0;
    }

    /**
     * @return term of the frame starting at the position, or 0.
     */
    long termStartingAt(final long position)
    {
        for (int i = terms.size() - 1; i >= 0; i--)
        {
            if (starts.getLong(i) <= position)
            {
                return terms.getLong(i);
            }
        }
        return 0;
    }

    /**
     * @return where the term starts, or -1 if no frame of it is held.
     */
    long startOf(final long term)
    {
        for (int i = terms.size() - 1; i >= 0; i--)
        {
            if (terms.getLong(i) == term)
            {
                return starts.getLong(i);
            }
        }
        return -1;
    }

    /**
     * @return where the term's frames end: the next term's start, or logEnd for the last term.
     */
    long endOf(final long term, final long logEnd)
    {
        for (int i = 0; i < terms.size(); i++)
        {
            if (terms.getLong(i) == term)
            {
                return i + 1 < terms.size() ? starts.getLong(i + 1) : logEnd;
            }
        }
        return -1;
    }

    void clear()
    {
        terms.clear();
        starts.clear();
    }

    void truncate(final long position)
    {
        while (!starts.isEmpty() && starts.getLong(starts.size() - 1) >= position)
        {
            terms.removeAt(terms.size() - 1);
            starts.removeAt(starts.size() - 1);
        }
    }

    long lastTerm()
    {
        return terms.isEmpty() ? 0 : terms.getLong(terms.size() - 1);
    }

    int size()
    {
        return terms.size();
    }

    long term(final int index)
    {
        return terms.getLong(index);
    }

    long start(final int index)
    {
        return starts.getLong(index);
    }

    /**
     * @return index of the first term whose frames reach beyond the position (its region ends after it).
     */
    int firstIndexReaching(final long position)
    {
        for (int i = 0; i < terms.size(); i++)
        {
            if (i + 1 >= terms.size() || starts.getLong(i + 1) > position)
            {
                return i;
            }
        }
        return terms.size();
    }
}
