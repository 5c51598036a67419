#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NetworkDNS
import NetworkSystem

/// Puts datagrams on a UDP socket (a QUIC connection's packets, a multicast group's sends):
/// straight to the socket where its descriptor is known (one `sendmsg` per batch, the kernel
/// segmenting a batch of full-size datagrams, with each batch's whole TOS byte), through NIO
/// otherwise, and through NIO too while the socket's buffer is full (NIO then waits for it to
/// drain; direct writes resume once NIO has written everything it took, so datagrams keep their
/// order). NIO marks a datagram with its ECN codepoint alone, so one whose TOS byte needs a DSCP
/// other than the socket's waits here instead, with everything after it, and the socket is tried
/// again every millisecond until it takes them. Runs on the channel's loop.
///
/// A refused segmentation turns segmentation off for the socket and sends that batch's
/// datagrams one by one: `EMSGSIZE` when the segments are larger than the path's packets (the
/// kernel would fragment single datagrams, but not segments), `EIO` where the device or IPsec
/// cannot take segments, `EINVAL` for other limits. Through NIO, batches always go as single
/// datagrams, since NIO would close the channel on such an error.
///
/// (Sendable so that a group's connections, made on any thread, can be handed it; it is used on
/// its channel's loop only.)
final class DatagramWriter: @unchecked Sendable {
    private var direct: DirectSocket?
    /// Writes handed to NIO and not yet done.
    private var queuedInNIO = 0
    /// Whether each write names its destination (an unconnected socket, a group's).
    private var addressed = false
    /// The TOS bytes the socket gives its IPv4 and IPv6 datagrams itself (its service class).
    private var socketTOS: (v4: UInt8, v6: UInt8) = (0, 0)
    /// Batches NIO could not mark (and those after them), waiting for room in the socket's
    /// buffer; bounded as NIO's own queue is, by the senders' wait for their completions.
    private var held: [HeldBatch] = []
    /// A retry of `held` is scheduled.
    private var retryScheduled = false
    /// How long held batches wait before the socket is tried again: a UDP socket's buffer
    /// drains at the link's pace, and NIO itself would only learn of room at the next turn.
    private static let heldRetryDelay = TimeAmount.milliseconds(1)

    /// Held batches to one destination (a refused segmentation leaves singles), with the
    /// promise they settle and the first loss among them.
    private struct HeldBatch {
        var batches: ArraySlice<DatagramBatch>
        let remote: SocketAddress
        let promise: EventLoopPromise<Void>?
        var lost: FlowError?

        init(batches: [DatagramBatch], remote: SocketAddress, promise: EventLoopPromise<Void>?) {
            self.batches = batches[...]
            self.remote = remote
            self.promise = promise
        }
    }

    /// Whether batches of several datagrams can be sent (straight to the socket only).
    private(set) var segments = false
    /// A server's connection, a UDP connection: a refusal (ICMP port unreachable for an
    /// earlier datagram, from an address its client left or a port not open yet) does not end
    /// the socket; the datagram the kernel reported it on is sent again, once.
    var toleratesRefusals = false
    /// Whether a datagram that cannot go now (too large for the path, no route, buffers short)
    /// fails the write (a group's send, whose sender learns why) rather than being dropped as a
    /// lost one (a QUIC packet: loss recovery takes it from there).
    var reportsLostDatagrams = false

    /// Datagrams go to `descriptor` (duplicated here) from now on, naming their destination
    /// when `addressed` (an unconnected socket); segmentation is on where the system has it.
    func writeDirectly(to descriptor: Int32, addressed: Bool = false) {
        direct = DirectSocket(duplicating: descriptor)
        segments = direct != nil && System.supportsUDPSegmentationOffload
        self.addressed = addressed
        if let direct { socketTOS = (direct.trafficClassByte(overIPv4: true), direct.trafficClassByte(overIPv4: false)) }
    }

    /// Reconnects the socket to `remote`, so that it leaves from the source address the route
    /// to `remote` now has (`DirectSocket.reconnect(to:)`), and returns its new local address;
    /// nil when datagrams do not go straight to the socket, or the system refused.
    func reconnect(to remote: SocketAddress) -> SocketAddress? {
        guard let direct else { return nil }
        do {
            let storage = try remote.withSockAddr { address, length in
                try direct.reconnect(to: UnsafeRawBufferPointer(start: address, count: length))
            }
            return SocketAddress(storage: storage)
        } catch {
            NetworkLog.quic.debug("could not move the socket to a new path: \(error)")
            return nil
        }
    }

    /// Lets go of the socket (it stays open while a duplicate exists).
    func release() {
        direct = nil
        segments = false
        failHeld(.posix(ECANCELED))
    }

    deinit {
        for entry in held { entry.promise?.fail(FlowError.posix(ECANCELED)) }
    }

    /// Writes `batches` to `remote` in order and flushes. Returns the socket's error when it
    /// cannot go on, else nil. `written`, when given, completes once every datagram is written,
    /// with the first error of one that could not go when `reportsLostDatagrams`.
    func write(
        _ batches: [DatagramBatch], to remote: SocketAddress, through outbound: some DatagramOutbound,
        written: EventLoopPromise<Void>? = nil
    ) -> FlowError? {
        var pending = batches[...]
        var lost: FlowError?
        let overIPv4 = Self.isIPv4(remote)
        if let direct, queuedInNIO == 0, held.isEmpty {
            switch sendDirectly(&pending, through: direct, to: remote, overIPv4: overIPv4, lost: &lost) {
            case .drained, .blocked: break
            case .failed(let code):
                written?.fail(FlowError.posix(code))
                return .posix(code)
            }
        }
        var writes: [EventLoopFuture<Void>] = []
        var handedToNIO = false
        for batch in pending {
            let metadata = nioMetadata(of: batch, overIPv4: overIPv4)
            if direct != nil, !held.isEmpty || metadata == nil {
                // NIO cannot give it its TOS byte (it writes the ECN codepoint alone): it waits for
                // the socket here, and whatever follows it waits behind it.
                let promise = written.map { _ in outbound.eventLoop.makePromise(of: Void.self) }
                if let promise { writes.append(promise.futureResult) }
                held.append(HeldBatch(batches: [batch], remote: remote, promise: promise))
                continue
            }
            handedToNIO = true
            batch.forEachPacket { packet in
                let promise = direct == nil && written == nil ? nil : outbound.eventLoop.makePromise(of: Void.self)
                if let promise {
                    writes.append(promise.futureResult)
                    if direct != nil {
                        queuedInNIO += 1
                        promise.futureResult.assumeIsolated().whenComplete { [weak self] _ in self?.queuedInNIO -= 1 }
                    }
                }
                // (Without a descriptor to hold it for, a datagram NIO cannot mark fully keeps its
                // ECN codepoint and loses its DSCP.)
                let carried = metadata ?? AddressedEnvelope<ByteBuffer>.Metadata(ecnState: ECNCodepoint.state(batch.ecn))
                outbound.write(datagram: AddressedEnvelope(remoteAddress: remote, data: packet, metadata: carried), promise: promise)
            }
        }
        if handedToNIO { outbound.flushDatagrams() }
        if !held.isEmpty { retryHeld(on: outbound.eventLoop) }
        if let written {
            if writes.isEmpty {
                if let lost { written.fail(lost) } else { written.succeed() }
            } else {
                let lost = lost
                EventLoopFuture.andAllSucceed(writes, on: written.futureResult.eventLoop).whenComplete { result in
                    switch (result, lost) {
                    case (_, let lost?): written.fail(lost)
                    case (.failure(let error), nil): written.fail(error)
                    case (.success, nil): written.succeed()
                    }
                }
            }
        }
        return nil
    }

    /// How a run of direct sends ended.
    private enum DirectRun {
        /// Every batch went (or was lost as NIO would lose it).
        case drained
        /// The socket's buffer is full; the rest is still pending.
        case blocked
        /// The socket failed with this errno.
        case failed(Int32)
    }

    /// Sends the batches of `pending` straight to the socket, in order, removing each one that
    /// went; `lost` takes the first error of a datagram lost on the way (`reportsLostDatagrams`).
    private func sendDirectly(
        _ pending: inout ArraySlice<DatagramBatch>, through direct: DirectSocket, to remote: SocketAddress, overIPv4: Bool,
        lost: inout FlowError?
    ) -> DirectRun {
        var retriedRefusal = false
        while let batch = pending.first {
            let tos = tos(of: batch, overIPv4: overIPv4)
            let outcome = Self.send(batch, through: direct, tos: tos, overIPv4: overIPv4, to: addressed ? remote : nil)
            switch outcome {
            case .wrote:
                pending.removeFirst()
                retriedRefusal = false
            case .wouldBlock:
                return .blocked
            case .failed(let code) where batch.segmentSize != nil && Self.refusesSegments(code):
                NetworkLog.quic.debug("the path refused segmented datagrams (errno \(code)): sending them one by one")
                segments = false
                pending.removeFirst()
                pending = ArraySlice(batch.singles + pending)
            case .failed(ECONNREFUSED) where toleratesRefusals:
                // The refusal is the kernel's report of an earlier datagram's ICMP port
                // unreachable, handed back on this call, which sent nothing: once more, then
                // this one counts as lost (not reported: it is not this datagram's error).
                if retriedRefusal { pending.removeFirst() }
                retriedRefusal.toggle()
            case .failed(let code) where Self.losesDatagram(code):
                // As NIO does: a datagram too large for the path (a path MTU probe), or an
                // unreachable host for now.
                if reportsLostDatagrams, lost == nil { lost = .posix(code) }
                pending.removeFirst()
            case .failed(let code):
                return .failed(code)
            }
        }
        return .drained
    }

    /// One `sendmsg` of `batch`, to `remote` on an unconnected socket.
    private static func send(
        _ batch: DatagramBatch, through direct: DirectSocket, tos: UInt8?, overIPv4: Bool, to remote: SocketAddress?
    ) -> DirectSocket.Outcome {
        func send(to destination: UnsafeRawBufferPointer?) -> DirectSocket.Outcome {
            guard !batch.followers.isEmpty else {
                return batch.bytes.withUnsafeReadableBytes { bytes in
                    direct.sendDatagram(bytes, segmentSize: batch.segmentSize, tos: tos, overIPv4: overIPv4, to: destination)
                }
            }
            // (The batch holds every buffer through the call, unchanged: their bytes stay where
            // they are while the kernel copies them.)
            var parts: [UnsafeRawBufferPointer] = []
            parts.reserveCapacity(batch.followers.count + 1)
            parts.append(batch.bytes.withUnsafeReadableBytes { $0 })
            // (By index: a loop over the array copies each buffer out, a retain and a release.)
            for index in batch.followers.indices { parts.append(batch.followers[index].withUnsafeReadableBytes { $0 }) }
            return direct.sendDatagram(parts: parts, segmentSize: batch.segmentSize, tos: tos, overIPv4: overIPv4, to: destination)
        }
        guard let remote else { return send(to: nil) }
        return remote.withSockAddr { address, length in send(to: UnsafeRawBufferPointer(start: address, count: length)) }
    }

    /// The metadata NIO writes `batch` with when that gives it its TOS byte: none for the
    /// socket's own byte, the ECN codepoint for a byte without DSCP (NIO's control message
    /// carries the codepoint alone). Nil when NIO cannot (a DSCP other than the socket's).
    private func nioMetadata(of batch: DatagramBatch, overIPv4: Bool) -> AddressedEnvelope<ByteBuffer>.Metadata?? {
        guard let tos = tos(of: batch, overIPv4: overIPv4) else { return .some(nil) }
        guard tos >> 2 == 0 else { return nil }
        return .some(AddressedEnvelope<ByteBuffer>.Metadata(ecnState: ECNCodepoint.state(tos & 3)))
    }

    /// Tries the held batches again after `heldRetryDelay`, once NIO has written what it took
    /// (they must not overtake it), until the socket takes them all; later ones wait behind.
    private func retryHeld(on eventLoop: EventLoop) {
        guard !retryScheduled else { return }
        retryScheduled = true
        eventLoop.scheduleTask(in: Self.heldRetryDelay) { [weak self] in
            guard let self else { return }
            self.retryScheduled = false
            guard let direct = self.direct else { return self.failHeld(.posix(ECANCELED)) }
            guard self.queuedInNIO == 0 else { return self.retryHeld(on: eventLoop) }
            while var entry = self.held.first {
                var lost = entry.lost
                let run = self.sendDirectly(
                    &entry.batches, through: direct, to: entry.remote, overIPv4: Self.isIPv4(entry.remote), lost: &lost)
                entry.lost = lost
                switch run {
                case .drained:
                    self.held.removeFirst()
                    if let lost { entry.promise?.fail(lost) } else { entry.promise?.succeed() }
                case .blocked:
                    self.held[0] = entry
                    return self.retryHeld(on: eventLoop)
                case .failed(let code):
                    // (The flow learns it from the sends' completions; the socket's own error
                    // reaches it through NIO's next read or write.)
                    return self.failHeld(.posix(code))
                }
            }
        }
    }

    /// Settles every held batch's promise with `error`, sending nothing more.
    private func failHeld(_ error: FlowError) {
        let entries = held
        held = []
        for entry in entries { entry.promise?.fail(error) }
    }

    /// The TOS byte `batch` leaves with, nil when it is the socket's own (no control message).
    private func tos(of batch: DatagramBatch, overIPv4: Bool) -> UInt8? {
        let own = overIPv4 ? socketTOS.v4 : socketTOS.v6
        let tos = (batch.dscp ?? own >> 2) << 2 | (batch.ecn & 3)
        return tos == own ? nil : tos
    }

    /// IPv4 datagrams (an IPv4-mapped address on an IPv6 socket too) take their TOS byte from
    /// `IP_TOS`, IPv6 ones from `IPV6_TCLASS`.
    private static func isIPv4(_ address: SocketAddress) -> Bool {
        guard case .v6(let v6) = address else { return true }
        return withUnsafeBytes(of: v6.address.sin6_addr) { $0.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) }
    }

    private static func refusesSegments(_ code: Int32) -> Bool {
        code == EMSGSIZE || code == EIO || code == EINVAL
    }

    private static func losesDatagram(_ code: Int32) -> Bool {
        code == EMSGSIZE || code == EHOSTUNREACH || code == ENOBUFS
    }
}
