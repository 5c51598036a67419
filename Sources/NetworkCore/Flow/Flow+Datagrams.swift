import Foundation
import NIOCore

/// The datagram side of sending on the loop: one buffer for a hop's datagrams, the outbox that
/// writes them at the flush with one promise per flush, and the hand-over of their completions.
extension Flow {
    /// The largest datagram that cannot fail alone while fragmentation is allowed: the IPv4 UDP
    /// payload limit (the kernel fragments anything up to it). Larger ones fail with `EMSGSIZE`.
    static let largestDatagramThatCannotFailAlone = 65_507

    /// Queues a datagram send for the loop; a completion closure becomes a datagram completion.
    /// True when the loop must be woken.
    func submitDatagram(_ send: consuming FlowSend) -> Bool {
        if let body = send.completion {
            send.completion = nil
            send.datagramCompletion = ClosureDatagramCompletion(body: body)
        }
        return mailbox.submit(.send(consume send))
    }

    /// Copies the bytes of every datagram send of one hop that still sits in the caller's `Data`
    /// into one buffer, in order, and makes room in the outbox for them: allocations per hop
    /// instead of per datagram. Each send then takes its slice (`takeDatagramBytes`); all bytes
    /// are written before any slice exists, since writing to a shared buffer would copy it.
    func gatherDatagramBytes(_ operations: [FlowOperation]) -> ByteBuffer? {
        var sends = 0
        var total = 0
        for index in operations.indices {
            guard let count = operations[index].uncopiedByteCount else { continue }
            sends += 1
            total += count
        }
        guard sends > 0 else { return nil }
        // Room in the outbox only where they will be written now (held sends wait for `ready`).
        if sends > 1, case .write = machine.sendDecision { datagramOutbox.reserve(sends) }
        guard total > 0 else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: total)
        for index in operations.indices {
            operations[index].withUncopiedBytes { _ = buffer.writeBytes($0) }
        }
        return buffer
    }

    /// Gives `send` its bytes as its slice of the hop's buffer (`gatherDatagramBytes`).
    /// (In place: a send returned from a consuming call was copied and destroyed on the way.)
    func takeDatagramBytes(_ send: inout FlowSend, from buffer: inout ByteBuffer?) {
        guard let count = send.uncopiedCount, count == 0 || buffer != nil else { return }
        // Empty content is an empty datagram (or message); only nil content sends nothing.
        send.data = count == 0 ? ByteBuffer() : buffer?.readSlice(length: count)
        send.uncopied = nil
    }

    /// A datagram send that puts nothing on the wire (part of a datagram, a bare completion, a
    /// refused send) is settled after the datagrams taken before it, not ahead of them.
    func settleDatagramSend(_ send: FlowSend, _ error: FlowError?) {
        guard !datagramOutbox.isEmpty else { return finish(send, error) }
        guard let completion = send.datagramCompletion else { return }
        datagramOutbox.append(DatagramOutbox.Entry(datagram: nil, completion: completion, error: error))
    }

    /// Writes everything in the outbox to `channel` (the caller flushes): one promise per
    /// segment (`DatagramOutbox`), whose result settles the segment's completions, handed on as
    /// one batch.
    func writeDatagramOutbox(to channel: Channel, transport: FlowTransport) {
        guard !datagramOutbox.isEmpty else { return }
        var entries = datagramOutbox.take()
        let alone = datagramsFailAlone
        let segments = DatagramOutbox.segments(of: entries) { alone || $0.readableBytes > Self.largestDatagramThatCannotFailAlone }
        // The writes first (each datagram leaves its entry: completions waiting for their queue
        // must not keep the bytes alive), then the promises' callbacks, which keep the entries
        // (nothing is flushed yet, so none can have completed but by failing, and a callback
        // added to a completed future runs at once).
        var promises: [EventLoopPromise<Void>?] = []
        promises.reserveCapacity(segments.count)
        let route = directDatagramRoute(for: transport)
        var socketError: FlowError?
        for segment in segments {
            // A promise only where a completion waits for it.
            let waited = entries[segment.range].contains { $0.completion != nil }
            let holder = waited ? segment.holder : nil
            let promise = holder.map { _ in eventLoop.makePromise(of: Void.self) }
            if let route {
                let error = writeDatagramsDirectly(
                    &entries, range: segment.range, through: route.writer, to: route.remote, channel: route.channel,
                    promise: promise)
                // (A listener's socket goes on: its failure is not this peer's.)
                if let error, route.owned { socketError = socketError ?? error }
                promises.append(promise)
                continue
            }
            for index in segment.range {
                guard let datagram = entries[index].datagram else { continue }
                entries[index].datagram = nil
                writeDatagram(
                    datagram, message: entries[index].completion?.framerMessage, ecn: entries[index].ecn, to: channel,
                    transport: transport, promise: index == holder ? promise : nil)
            }
            promises.append(promise)
        }
        let written = entries
        for (segment, promise) in zip(segments, promises) {
            guard let promise else {
                // Nothing on the wire waits for it (or nobody waits): settled now, in its turn.
                if segment.holder == nil {
                    FlowDatagramCompletions(written, segment: segment, holderError: nil).deliver()
                }
                continue
            }
            promise.futureResult.whenComplete { result in
                let error: FlowError?
                switch result {
                case .success: error = nil
                case .failure(let failure): error = FlowError(failure)
                }
                FlowDatagramCompletions(written, segment: segment, holderError: error).deliver()
            }
        }
        if let socketError {
            // As NIO reports a failed write: after the writes' own results, in a turn of its own.
            eventLoop.execute { self.transportError(socketError, channel: channel) }
        }
    }

    /// Settles the outbox's completions with `error`, writing nothing (no transport is left).
    func failDatagramOutbox(_ error: FlowError) {
        let entries = datagramOutbox.take()
        let unsent = entries.map {
            DatagramOutbox.Entry(datagram: nil, completion: $0.completion, error: $0.datagram == nil ? $0.error : error)
        }
        let segment = DatagramOutbox.Segment(range: unsent.indices, holder: nil)
        FlowDatagramCompletions(unsent, segment: segment, holderError: nil).deliver()
    }

    private func writeDatagram(
        _ datagram: ByteBuffer, message: (any AnyObject & Sendable)?, ecn: UInt8, to channel: Channel,
        transport: FlowTransport, promise: EventLoopPromise<Void>?
    ) {
        if case .shared(let peer) = transport {
            // (Through the peer's framers, if it has some.)
            peer.write(FramedMessage(bytes: datagram, metadata: message), ecn: ecn, promise: promise)
        } else if let messageLayer {
            // The layer below (a framer, WebSocket) takes the message, in a direct call.
            messageLayer.send(FramedMessage(bytes: datagram, metadata: message), promise: promise)
        } else if isFramed {
            // Through the pipeline to the layer below (not joined yet).
            channel.write(FramedMessage(bytes: datagram, metadata: message), promise: promise)
        } else if !sendPath.socketHasDSCP, let metadata = ECNCodepoint.writeMetadata(ecn), let remote = channel.remoteAddress {
            // The codepoint rides with the datagram as a control message (`IP_TOS` or
            // `IPV6_TCLASS`); the channel is connected to `remote`. NIO's carries the codepoint
            // alone and would clear a service class's DSCP: with a class, the class wins.
            channel.write(AddressedEnvelope(remoteAddress: remote, data: datagram, metadata: metadata), promise: promise)
        } else {
            channel.write(datagram, promise: promise)
        }
    }

    /// Every datagram may fail on its own (each gets its own promise): with fragmentation
    /// disabled (any datagram over the path MTU fails) and under (D)TLS (a record can be refused).
    private var datagramsFailAlone: Bool {
        sendPath.fragmentationDisabled || sessionFacts?.tls != nil || transport.isDTLSPeer
    }
}
