package io.lockstep.cluster.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The TLS layer of one connection, between its socket and the plain bytes the transport frames: records read from
 * the socket are decrypted into the connection's read buffer, and what the transport queued in its write buffer is
 * encrypted on flush. The initial handshake runs first, driven from both; what the transport queues before it is
 * done (its own {@code Hello}) waits, in the clear, in the connection's write buffer, and is sent only inside the
 * link.
 * <p>
 * After the initial handshake the peer may still send handshake messages (a TLS 1.3 key update, which asks for one
 * back). Answering one never stops this side from reading: if the answer cannot be written yet (the socket is
 * backed up), it is kept pending and sent ahead of the next data, while records keep being decrypted. Otherwise two
 * members each waiting for the other to read would hold their link for good.
 * <p>
 * Buffers: one record in (as it arrives), one decrypted record (the read buffer may have less room than a record),
 * and two records out, heap buffers because the JDK's AES-GCM works on arrays: about 65 KiB per connection, taken
 * only when the connection turns out to be TLS.
 */
final class TlsLink
{
    /** Records encrypted per flush before the socket is written: a burst of small messages becomes few writes. */
    private static final int RECORDS_OUT = 2;
    /**
     * Handshake messages (key updates asking for one back) the peer may send while this side's answer is still
     * unsent. The engine keeps a new cipher state for each until it is written: a peer that sends them and never
     * reads would otherwise grow this member's memory without bound. A genuine peer asks once per 2^37 bytes.
     */
    static final int MAX_UNANSWERED = 16;
    /**
     * Records without data (key updates, session tickets) the peer may send beyond the answers it owes this side's
     * own key updates. Each costs this side a key derivation and often an answer (about 25 us, twenty times the
     * decryption of a 1 KiB record), so they are paid for by what gives a genuine peer cause to send one: a record of
     * ours (a peer whose key limit for this side's records is reached asks for new keys on each of them until ours
     * arrive), and {@value #DATA_PER_QUIET_RECORD} bytes of the peer's data (its own key limit). A connection starts
     * with {@value #QUIET_RECORD_BURST} and saves at most {@value #QUIET_RECORD_SAVED}. A genuine peer renews its keys
     * once per 2^37 bytes (the JDK's limit for AES-GCM); one that sends key updates as fast as it can is cut off.
     */
    static final int QUIET_RECORD_BURST = 16;
    /** The most credit for records without data a connection keeps: see {@link #QUIET_RECORD_BURST}. */
    static final int QUIET_RECORD_SAVED = 256;
    /** The peer's data bytes that earn it one record without data: see {@link #QUIET_RECORD_BURST}. */
    static final int DATA_PER_QUIET_RECORD = 4096;
    /** A TLS record's header: type, version, and the length of what follows in its last two bytes. */
    private static final int RECORD_HEADER_LENGTH = 5;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    /** Records from the socket, not yet decrypted (write mode). */
    private final ByteBuffer netIn;
    /** Decrypted bytes the read buffer had no room for (write mode). */
    private final ByteBuffer plainIn;
    /** Encrypted records not yet written to the socket (write mode). */
    private final ByteBuffer netOut;
    /** The largest record the engine writes: room wrap needs in netOut. */
    private final int packetLength;
    /** The initial handshake is done: the transport's own bytes may flow. */
    private boolean handshakeDone;
    /** A handshake message after the initial handshake (a key update) waits to be written. */
    private boolean wrapPending;
    /** Records that carried no data (key updates, mostly) while a handshake message of ours was unsent. */
    private int unanswered;
    /** Records without data the peer may still send, besides answers it owes. */
    private int quietRecordCredit = QUIET_RECORD_BURST;
    /**
     * This side's key updates that ask for an answer, not yet answered (the JDK asks again on each record while its
     * key limit is past, so a busy link sends many): at most {@link #QUIET_RECORD_BURST}, beyond which answers are
     * paid from credit, so that a connection's backlog stays within a few polls' share.
     */
    private int answersOwed;
    /** Data bytes towards the next credit. */
    private int dataTowardsCredit;
    /** The peer's handshake has moved the engine on: it sent at least one whole handshake message, not a fragment. */
    private boolean madeProgress;
    /** Records without data the transport's links may still decrypt in this poll (shared by them all). */
    private final QuietRecordShare quietShare;
    /** The last decrypt stopped at the end of the poll's share, with records left: read again next poll. */
    private boolean starved;

    /**
     * @throws SSLException if the engine will not begin a handshake (TLS 1.3 disabled in this JVM's security
     *                      settings, say): this connection fails, with the reason, and nothing else.
     */
    TlsLink(final SSLEngine engine, final QuietRecordShare quietShare) throws SSLException
    {
        this.engine = engine;
        this.quietShare = quietShare;
        final SSLSession session = engine.getSession();
        packetLength = session.getPacketBufferSize();
        netIn = ByteBuffer.allocate(packetLength);
        plainIn = ByteBuffer.allocate(session.getApplicationBufferSize());
        netOut = ByteBuffer.allocate(RECORDS_OUT * packetLength);
        // Without this the engine reads as not handshaking until its first wrap or unwrap.
        engine.beginHandshake();
    }

    /**
     * @param firstBytes bytes already read from the socket before the connection was known to be TLS (read mode):
     *                   the start of the peer's first record.
     */
    void takeFirstBytes(final ByteBuffer firstBytes)
    {
        netIn.put(firstBytes);
    }

    /** @return true once the initial handshake is done: the transport's own bytes may flow. */
    boolean handshakeDone()
    {
        return handshakeDone;
    }

    /**
     * @return the peer's certificate, as the handshake verified it, or null if it presented none.
     */
    X509Certificate peerCertificate()
    {
        try
        {
            final Certificate[] chain = engine.getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x509 ? x509 : null;
        }
        catch (final SSLPeerUnverifiedException ex)
        {
            return null;
        }
    }

    /**
     * Read what the socket has, move the handshake on, and decrypt into {@code plain} what fits.
     *
     * @param plain the connection's read buffer (write mode).
     * @return -1 at the end of the stream, else the decrypted bytes added to {@code plain}.
     * @throws IOException for a TLS failure (a handshake the peer failed, a record that does not decrypt or is too
     *                     long), with the engine's reason, or a socket failure.
     */
    int read(final SocketChannel channel, final ByteBuffer plain) throws IOException
    {
        if (readSocket(channel) < 0)
        {
            return -1;
        }
        return decrypt(channel, plain);
    }

    /**
     * Read what the socket has, as far as a record's room allows, and give it to the engine later: no TLS work.
     *
     * @return the bytes read, or -1 at the end of the stream.
     */
    int readSocket(final SocketChannel channel) throws IOException
    {
        return netIn.hasRemaining() ? channel.read(netIn) : 0;
    }

    /**
     * @return true if a whole record waits for the engine, or as much of one as this link can ever hold (the engine
     * then refuses it): until then, giving the bytes to the engine costs a handshake read for nothing.
     */
    boolean holdsWholeRecord()
    {
        final int held = netIn.position();
        if (!netIn.hasRemaining())
        {
            return true;
        }
        if (held < RECORD_HEADER_LENGTH)
        {
            return false;
        }
        final int length = ((netIn.get(3) & 0xFF) << 8) | (netIn.get(4) & 0xFF);
        return held >= RECORD_HEADER_LENGTH + length;
    }

    /**
     * @return true once the peer has sent a whole handshake message the engine could act on, or a whole record waits
     * for its turn: a connection that sent only part of a record, or records holding only part of a message, is as
     * silent as one that sent nothing, however long it takes to send the rest.
     */
    boolean spoke()
    {
        return madeProgress || holdsWholeRecord();
    }

    /** @return true if the last decrypt stopped at the end of the poll's share of records without data. */
    boolean starved()
    {
        return starved;
    }

    /**
     * Decrypt what is already read into {@code plain}, without reading the socket: for when the read buffer was full
     * and the transport has since made room.
     *
     * @return the decrypted bytes added to {@code plain}, or -1 once the peer closed the link.
     */
    int decrypt(final SocketChannel channel, final ByteBuffer plain) throws IOException
    {
        if (!handshakeDone)
        {
            handshake(channel);
        }
        int added = drainPlain(plain);
        if (starved && quietShare.spent())
        {
            // Stopped earlier in this same poll at the end of the share (the selector reports the socket again
            // while data waits in it): the next poll reads on, so that a link gets one record past the share, not
            // one per read.
            return added;
        }
        starved = false;
        while (handshakeDone && netIn.position() > 0 && 0 == plainIn.position())
        {
            final SSLEngineResult result = unwrap();
            if (SSLEngineResult.Status.CLOSED == result.getStatus())
            {
                // The peer's close_notify: the end of the stream, as a socket's close is in the clear.
                return added > 0 ? added : -1;
            }
            if (SSLEngineResult.Status.BUFFER_OVERFLOW == result.getStatus())
            {
                // plainIn is empty here, and holds any record TLS allows: the peer declared a longer one.
                throw new SSLException("a TLS record longer than " + plainIn.capacity() + " bytes of data");
            }
            final boolean quiet = afterPostHandshakeStep(channel, result);
            added += drainPlain(plain);
            if (quiet && quietShare.spent())
            {
                // Past the poll's share: this link's next records wait for the next poll. Only a link that sends
                // records without data stops here; one whose records carry data reads on, so that links spending
                // the share cannot hold up the others' data.
                starved = true;
                break;
            }
            if (SSLEngineResult.Status.BUFFER_UNDERFLOW == result.getStatus())
            {
                refuseIfNoRoom();
                break;
            }
            if (0 == result.bytesConsumed())
            {
                break;
            }
        }
        return added;
    }

    /** @return true if decrypted bytes wait for room in the read buffer, or records wait to be decrypted. */
    boolean hasBuffered()
    {
        return plainIn.position() > 0 || netIn.position() > 0;
    }

    /** @return true if there is something to send even with nothing queued: handshake records, or unsent records. */
    boolean wantsFlush()
    {
        // Once the initial handshake is done the engine is asked nothing here (asking takes its lock).
        return netOut.position() > 0 || wrapPending ||
            (!handshakeDone && engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP);
    }

    /**
     * Encrypt what the transport queued and write it, after any records still unsent and any handshake message
     * pending; before the initial handshake is done, move it on instead and leave the queued bytes where they are.
     *
     * @param plain the connection's write buffer (read mode): what is encrypted is consumed.
     * @return true if the initial handshake finished here with records already read and waiting: the transport
     * should decrypt them without waiting for the socket, which may have nothing more to say.
     */
    boolean write(final SocketChannel channel, final ByteBuffer plain) throws IOException
    {
        if (!writeNet(channel))
        {
            return false;
        }
        final boolean wasDone = handshakeDone;
        if (!handshakeDone)
        {
            handshake(channel);
            if (!handshakeDone)
            {
                return false;
            }
        }
        final boolean finishedHere = !wasDone && hasBuffered();
        if (wrapPending && !sendPending(channel))
        {
            return finishedHere;
        }
        while (plain.hasRemaining())
        {
            while (plain.hasRemaining() && netOut.remaining() >= packetLength)
            {
                final SSLEngineResult result = engine.wrap(plain, netOut);
                if (SSLEngineResult.Status.OK != result.getStatus())
                {
                    throw new SSLException("TLS link closed while writing (" + result.getStatus() + ")");
                }
                // This side's own key update: the engine writes it on the next wrap; kept pending if none comes.
                recordSent();
                wrapPending = SSLEngineResult.HandshakeStatus.NEED_WRAP == result.getHandshakeStatus();
                if (wrapPending)
                {
                    // This side's own key update (its key limit for its own records): it asks for an answer.
                    answersOwed = Math.min(QUIET_RECORD_BURST, answersOwed + 1);
                }
                else
                {
                    unanswered = 0;
                }
            }
            if (!writeNet(channel))
            {
                return finishedHere;
            }
        }
        if (wrapPending)
        {
            sendPending(channel);
        }
        return finishedHere;
    }

    /**
     * After a record decrypted past the initial handshake: a task to run, or a message to answer.
     *
     * @return true if the record carried no data (a key update, most likely).
     */
    private boolean afterPostHandshakeStep(final SocketChannel channel, final SSLEngineResult result)
        throws IOException
    {
        final boolean quiet = 0 == result.bytesProduced() && result.bytesConsumed() > 0;
        SSLEngineResult.HandshakeStatus next = result.getHandshakeStatus();
        if (result.bytesProduced() > 0)
        {
            earnQuietRecordCredit(result.bytesProduced());
            if (SSLEngineResult.HandshakeStatus.NEED_WRAP == next)
            {
                // This side's own key update (its key limit for the peer's records), asking for an answer; or an
                // answer of ours still unsent from before, which counts one more owed than there is: bounded, so
                // that data records sent while our answer waits cannot build up credit without end.
                answersOwed = Math.min(QUIET_RECORD_BURST, answersOwed + 1);
            }
        }
        else if (quiet)
        {
            quietShare.take();
            if (answersOwed > 0)
            {
                answersOwed--;
            }
            else if (--quietRecordCredit < 0)
            {
                throw new SSLException("the peer sent records without data (key updates) faster than this side's " +
                    "records and its data give cause for: a flood");
            }
        }
        if (wrapPending && quiet && ++unanswered > MAX_UNANSWERED)
        {
            throw new SSLException("the peer sent more than " + MAX_UNANSWERED + " handshake messages (key updates) " +
                "while the answer to the first was still unsent: a flood");
        }
        if (SSLEngineResult.HandshakeStatus.NEED_TASK == next)
        {
            runTasks();
            next = engine.getHandshakeStatus();
        }
        if (SSLEngineResult.HandshakeStatus.NEED_WRAP == next)
        {
            wrapPending = true;
            sendPending(channel);
        }
        return quiet;
    }

    /**
     * Write the pending handshake messages, as far as room allows; never waits for the socket.
     *
     * @return true if nothing is pending any more.
     */
    private boolean sendPending(final SocketChannel channel) throws IOException
    {
        while (wrapPending)
        {
            if (netOut.remaining() < packetLength)
            {
                writeNet(channel);
                if (netOut.remaining() < packetLength)
                {
                    return false;
                }
            }
            final SSLEngineResult result = engine.wrap(EMPTY, netOut);
            if (SSLEngineResult.Status.CLOSED == result.getStatus())
            {
                throw new SSLException("the TLS link closed while answering the peer's handshake message");
            }
            if (SSLEngineResult.Status.OK != result.getStatus())
            {
                // The engine wants more room than a record of ours: wait for the socket to take what is queued.
                refuseIfStuck();
                return false;
            }
            wrapPending = SSLEngineResult.HandshakeStatus.NEED_WRAP == result.getHandshakeStatus();
        }
        unanswered = 0;
        writeNet(channel);
        return true;
    }

    /** A record of this side's gives the peer cause for one record without data. */
    private void recordSent()
    {
        if (quietRecordCredit < QUIET_RECORD_SAVED)
        {
            quietRecordCredit++;
        }
    }

    /** The peer's data: it may renew its keys once per so many bytes, up to the burst. */
    private void earnQuietRecordCredit(final int dataBytes)
    {
        if (quietRecordCredit >= QUIET_RECORD_SAVED)
        {
            return;
        }
        dataTowardsCredit += dataBytes;
        if (dataTowardsCredit >= DATA_PER_QUIET_RECORD)
        {
            final int earned = dataTowardsCredit / DATA_PER_QUIET_RECORD;
            dataTowardsCredit -= earned * DATA_PER_QUIET_RECORD;
            quietRecordCredit = Math.min(QUIET_RECORD_SAVED, quietRecordCredit + earned);
        }
    }

    /** Move the initial handshake as far as the bytes in hand allow. */
    private void handshake(final SocketChannel channel) throws IOException
    {
        while (true)
        {
            switch (engine.getHandshakeStatus())
            {
                case NEED_TASK -> runTasks();
                case NEED_WRAP ->
                {
                    if (netOut.remaining() < packetLength)
                    {
                        writeNet(channel);
                        if (netOut.remaining() < packetLength)
                        {
                            return;
                        }
                    }
                    final SSLEngineResult result = engine.wrap(EMPTY, netOut);
                    writeNet(channel);
                    if (SSLEngineResult.Status.CLOSED == result.getStatus())
                    {
                        throw new SSLException("the TLS handshake was refused");
                    }
                    if (SSLEngineResult.Status.OK != result.getStatus())
                    {
                        refuseIfStuck();
                        return;
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN ->
                {
                    final SSLEngineResult result = unwrap();
                    if (SSLEngineResult.Status.BUFFER_UNDERFLOW == result.getStatus())
                    {
                        refuseIfNoRoom();
                        return;
                    }
                    if (SSLEngineResult.Status.CLOSED == result.getStatus())
                    {
                        throw new SSLException("the peer closed the TLS link during the handshake");
                    }
                    if (SSLEngineResult.Status.BUFFER_OVERFLOW == result.getStatus())
                    {
                        // Application data behind the handshake, with decrypted bytes still waiting: later.
                        return;
                    }
                }
                default ->
                {
                    handshakeDone = true;
                    return;
                }
            }
        }
    }

    /** One record from netIn (as much of it as is there) into plainIn; netIn keeps what is left. */
    private SSLEngineResult unwrap() throws SSLException
    {
        netIn.flip();
        try
        {
            final SSLEngineResult result = engine.unwrap(netIn, plainIn);
            madeProgress |= result.bytesConsumed() > 0 &&
                SSLEngineResult.HandshakeStatus.NEED_UNWRAP != result.getHandshakeStatus() &&
                SSLEngineResult.HandshakeStatus.NEED_UNWRAP_AGAIN != result.getHandshakeStatus();
            return result;
        }
        finally
        {
            netIn.compact();
        }
    }

    /** Certificate checks and the like: run here, on the transport's thread, a handful per connect. */
    private void runTasks()
    {
        Runnable task;
        while (null != (task = engine.getDelegatedTask()))
        {
            task.run();
        }
    }

    /**
     * The engine wants more of a record than the buffer can ever hold: a record longer than TLS allows (the JDK
     * accepts a longer header before the handshake, and would wait for ever for the rest).
     */
    private void refuseIfNoRoom() throws SSLException
    {
        if (!netIn.hasRemaining())
        {
            throw new SSLException("a TLS record longer than " + netIn.capacity() + " bytes");
        }
    }

    /**
     * A wrap found no room with nothing queued: the engine asks for more than any record of ours needs, and would
     * ask again on every poll.
     */
    private void refuseIfStuck() throws SSLException
    {
        if (0 == netOut.position())
        {
            throw new SSLException("the TLS engine asks for more room than a record needs (" +
                engine.getSession().getPacketBufferSize() + " bytes)");
        }
    }

    /** @return true if every encrypted byte is written (the socket took them all). */
    private boolean writeNet(final SocketChannel channel) throws IOException
    {
        if (0 == netOut.position())
        {
            return true;
        }
        netOut.flip();
        try
        {
            channel.write(netOut);
            return !netOut.hasRemaining();
        }
        finally
        {
            netOut.compact();
        }
    }

    /** Move decrypted bytes into the read buffer, as many as it has room for. */
    private int drainPlain(final ByteBuffer plain)
    {
        if (0 == plainIn.position())
        {
            return 0;
        }
        plainIn.flip();
        final int n = Math.min(plainIn.remaining(), plain.remaining());
        final int limit = plainIn.limit();
        plainIn.limit(plainIn.position() + n);
        plain.put(plainIn);
        plainIn.limit(limit);
        plainIn.compact();
        return n;
    }
}
