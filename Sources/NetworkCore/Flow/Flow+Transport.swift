#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NetworkDNS

/// What the transport reports (called by the flow's channel handler methods, `Flow+ChannelHandler`,
/// or by the listener for a shared datagram socket), and opening and closing it. All on the flow's event loop.
extension Flow {
    func transportRead(_ buffer: ByteBuffer, channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        NetworkLog.traceConnection("received \(buffer.readableBytes) bytes", metadata: logMetadata)
        report.receivedBytes += UInt64(buffer.readableBytes)
        complete(receives.append(buffer))
    }

    /// A whole message from the framer below, with its metadata.
    func transportReadMessage(_ message: FramedMessage, channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        NetworkLog.traceConnection("received a message of \(message.bytes.readableBytes) bytes", metadata: logMetadata)
        report.receivedBytes += UInt64(message.bytes.readableBytes)
        complete(receives.append(message.bytes, metadata: message.metadata))
    }

    func transportActive(channel: Channel) {
        guard channel === transport.channel else { return }
        requestReadIfNeeded()
    }

    func transportReadComplete(channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        readEnded()
        publishReadyDatagrams()
        requestReadIfNeeded()
    }

    func transportEndOfStream(channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        NetworkLog.connection.debug("peer closed its sending side (end of stream)", metadata: logMetadata)
        readEnded()
        complete(receives.receivedEndOfStream())
    }

    func transportInactive(channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        readEnded()
        detachDirectSocket()
        // Errors (a reset included) reach `transportError` before the channel goes inactive, and
        // our own closes detach the channel first. What remains is NIO closing the socket after
        // the peer's FIN when our side had already shut its output: an orderly end of stream.
        if receives.mode == .stream && !receives.endOfStream && receives.terminalError == nil {
            complete(receives.receivedEndOfStream())
        }
    }

    func transportError(_ error: FlowError, channel: Channel) {
        guard channel === transport.channel else { return }
        takeLazyOperations()
        if receives.mode == .datagram, case .posix(ECONNREFUSED) = error {
            // ICMP port unreachable for an earlier datagram: not fatal for UDP, as on Apple.
            NetworkLog.traceConnection("ICMP port unreachable (ignored on UDP)", metadata: logMetadata)
            return
        }
        NetworkLog.connection.debug("transport error: \(error.logDescription)", metadata: logMetadata)
        detachDirectSocket()
        complete(receives.fail(error))
        // Mid-handshake (DTLS) or ready; the state machine ignores the one that does not apply.
        perform(machine.establishmentFailed(error, fatal: true))
        perform(machine.transportFailed(error))
    }

    /// A datagram for this flow arrived on a listener's shared socket. Returns false when the
    /// flow's buffer is full and the datagram was dropped.
    @discardableResult
    package func deliverSharedDatagram(_ buffer: ByteBuffer, facts: ReceivedDatagramFacts? = nil) -> Bool {
        eventLoop.preconditionInEventLoop()
        // A listener peer cannot slow its sender down: what the application has not read yet
        // is bounded by count and by bytes, and the rest dropped, as a full socket buffer would.
        // (What the peer's framers hold counts too: bytes of an unstarted framer, a message
        // being assembled.)
        guard case .shared(let peer) = transport, receives.bufferedDatagramCount < Self.datagramHighWaterCount,
            receives.bufferedBytes + (peer.framers?.heldBytes ?? 0) + buffer.readableBytes <= Self.streamHighWater
        else { return false }
        guard machine.state != .cancelled,
            mailbox.readyRoom(count: receives.bufferedDatagramCount, bytes: receives.bufferedBytes + buffer.readableBytes)
        else { return false }
        deliverPeerMessages(peer.receive(buffer), facts: facts)
        return true
    }

    /// Hands a listener peer's messages (its datagrams, or what its DTLS session decrypted) to
    /// its framers or to the receives, then the session's end if it ended. `facts` are those of
    /// the datagram the messages came in, reported with a plain datagram.
    func deliverPeerMessages(_ received: (messages: [ByteBuffer], end: GnuTLSSession.End?), facts: ReceivedDatagramFacts? = nil) {
        let framers: PeerFramers?
        if case .shared(let peer) = transport { framers = peer.framers } else { framers = nil }
        for message in received.messages {
            guard let framers else {
                receivedPeerMessage(FramedMessage(bytes: message, metadata: facts))
                continue
            }
            framers.received(message)
        }
        switch received.end {
        case nil:
            break
        case .closed:
            framers?.inputEnded()
            complete(receives.receivedEndOfStream())
        case .failed(let error):
            complete(receives.fail(error))
            perform(machine.transportFailed(error))
        }
    }

    /// One message from a listener peer: a datagram, or what its framers delivered.
    func receivedPeerMessage(_ message: FramedMessage) {
        NetworkLog.traceConnection("received a message of \(message.bytes.readableBytes) bytes", metadata: logMetadata)
        report.receivedBytes += UInt64(message.bytes.readableBytes)
        complete(receives.append(message.bytes, metadata: message.metadata))
    }

    /// The listener's shared socket closed under this flow.
    package func sharedTransportFailed(_ error: FlowError) {
        eventLoop.preconditionInEventLoop()
        complete(receives.fail(error))
        // Mid-handshake (DTLS) or ready; the state machine ignores the one that does not apply.
        perform(machine.establishmentFailed(error, fatal: true))
        perform(machine.transportFailed(error))
    }

    // MARK: - Opening and closing

    func startTransport() {
        // The peer's end may have been delivered before `ready` (an accepted connection's peer
        // can close before it is started): the ready state counts it too. (Nothing closes here:
        // our output is still open.)
        if receives.endOfStreamDelivered { directionEnded(machine.endOfStreamDelivered()) }
        requestReadIfNeeded()
        // Sends issued before the connection was ready leave now, in order.
        let queued = sendPath.takeQueued()
        batchDepth += 1
        for send in queued { write(send) }
        batchDepth -= 1
        flushIfNeeded()
    }

    func closeTransport(abortive: Bool) {
        let closing = transport
        // Datagrams taken this turn go to the socket first, as if flushed before the close.
        if let channel = closing.channel, !datagramOutbox.isEmpty {
            writeDatagramOutbox(to: channel, transport: closing)
            if case .shared = closing { channel.flush() } else { needsFlush = true }
        }
        // So do stream sends held for the flush (plain TCP only, so never a shared channel).
        if let channel = closing.channel, !uncopiedSends.isEmpty {
            writeUncopiedSends(to: channel)
            needsFlush = true
        }
        // Detach first: NIO reports the close synchronously, and those events must not be
        // mistaken for the peer's end of stream. The duplicate descriptor goes first of all: it
        // would keep the socket open past NIO's close.
        detachDirectSocket()
        mailbox.emptySpareBuffers()
        transport = .none
        messageLayer = nil
        // Receives waiting for this socket's next read now need the loop.
        updateReadArming()
        switch closing {
        case .none:
            return
        case .owned(let channel):
            if abortive, let stream = channel as? QUICStreamChannel {
                // A stream of a QUIC connection group: RESET_STREAM and STOP_SENDING.
                stream.reset(applicationError: stream.resetCode)
            } else if abortive, transportKind.isQUIC,
                let handler = try? channel.pipeline.syncOperations.handler(type: QUICDatagramHandler.self)
            {
                // A QUIC connection: CONNECTION_CLOSE now, whatever is still in flight.
                handler.closeNow()
            } else if abortive, let provider = channel as? SocketOptionProvider {
                // SO_LINGER with a zero timeout makes close() send a reset.
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).always { _ in
                    channel.close(promise: nil)
                }
            } else {
                closeGracefully(channel)
            }
        case .shared(let peer):
            inboundLayers = []
            peer.close()
        }
    }

    private func closeGracefully(_ channel: Channel) {
        // A TLS close waits for the peer's close_notify: let the socket read it (reads are on
        // demand otherwise) and close on the peer's FIN (half-closure would keep it open), or
        // the socket lingers in CLOSE-WAIT until NIOSSL's 5 s timeout.
        if transportKind == .tcp && receives.mode == .stream {
            // (Datagram channels, QUIC's included, have no such option: NIO traps on it.)
            try? channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
        // Writes of this loop turn are not flushed yet, and the flow lets go of the channel.
        if needsFlush {
            needsFlush = false
            channel.flush()
        }
        if receives.mode == .stream && !sendPath.writeClosed && mailbox.budget({ $0.unwritten }) > 0 {
            Self.close(channel, afterWritesWithin: Self.closeLinger)
        } else {
            channel.close(promise: nil)
        }
    }

    /// How long a gracefully closed stream socket may take to write what its sends handed over
    /// (they completed as they were taken) before it is closed regardless: a peer that stops
    /// reading must not hold the socket and its buffers for ever.
    static let closeLinger: TimeAmount = .seconds(10)

    /// Closes `channel` once everything written to it has gone out, as close(2) leaves a
    /// socket's send buffer to drain: shut the output (NIO does so after the pending writes, TLS
    /// after its close_notify), then close. Closes at once after `limit`.
    private static func close(_ channel: Channel, afterWritesWithin limit: TimeAmount) {
        let drained = channel.eventLoop.makePromise(of: Void.self)
        let deadline = channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        drained.futureResult.whenComplete { _ in
            deadline.cancel()
            channel.close(promise: nil)
        }
        channel.close(mode: .output, promise: drained)
    }
}
