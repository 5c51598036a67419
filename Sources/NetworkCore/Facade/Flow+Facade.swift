#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import NIOFoundationCompat
import NetworkSystem

/// What the `Network` module needs from a flow, in its own terms (`Data`, `FlowAddress`,
/// callbacks rather than futures), so that it never reaches into NIO.
extension Flow {
    /// Sends `data` (see `send(_:isComplete:closesWrite:completion:)`). The bytes are copied at
    /// most once: into a buffer the loop writes from (reused from earlier sends, `SendBufferPool`),
    /// or not at all when they go to the socket from this thread. `completesInline`: the
    /// completion does all its work when called and never runs its ticket
    /// (`FlowSend.completionRunsInline`).
    package func send(
        data: Data?, isComplete: Bool, closesWrite: Bool, completion: SendCompletion?, completesInline: Bool = false
    ) {
        // (Moved on: passed as it is, the send was copied and then destroyed here.)
        submit(
            send: FlowSend(
                uncopied: data, isComplete: isComplete, closesWrite: closesWrite, completion: completion,
                completesInline: completesInline))
    }

    /// Sends any contiguous or discontiguous bytes, copied once (`Data` as `send(data:)` does:
    /// at most once).
    package func send<Content: DataProtocol>(
        bytes content: Content?, isComplete: Bool, closesWrite: Bool, completion: SendCompletion?,
        completesInline: Bool = false
    ) {
        if let data = content as? Data {
            return send(
                data: data, isComplete: isComplete, closesWrite: closesWrite, completion: completion,
                completesInline: completesInline)
        }
        submit(
            send: FlowSend(
                data: Self.copy(content), isComplete: isComplete, closesWrite: closesWrite, completion: completion,
                completesInline: completesInline))
    }

    /// Sends on a datagram flow (see `send(_:isComplete:closesWrite:completion:)`). The bytes stay
    /// in `data` until the loop copies them, with the rest of their hop's, into one buffer; the
    /// completion is settled with the other datagrams of its flush (`FlowDatagramCompletion`).
    /// `ecn`, when not 0, is the datagram's ECN codepoint on the wire, and `trafficClass`, when
    /// given, the service class whose DSCP it carries instead of the parameters' (plain
    /// datagrams only; docs/data-path.md says where).
    package func send(
        datagram data: Data?, isComplete: Bool, closesWrite: Bool, completion: consuming (any FlowDatagramCompletion)?,
        ecn: UInt8 = 0, trafficClass: TrafficClass? = nil
    ) {
        var send = FlowSend(data: nil, isComplete: isComplete, closesWrite: closesWrite)
        send.uncopied = data
        // (Moved in: the caller made it for this send. Made whole in `FlowSend.init(uncopied:…)`
        // instead, the send was copied once more on its way: counted.)
        send.datagramCompletion = consume completion
        send.ecn = ecn
        send.dscp = trafficClass.map { SocketOptionPlan.dscp($0) ?? 0 }
        submit(datagram: consume send)
    }

    /// Sends any contiguous or discontiguous bytes on a datagram flow, copied once; see
    /// `send(datagram:isComplete:closesWrite:completion:)`.
    package func send<Content: DataProtocol>(
        datagramBytes content: Content?, isComplete: Bool, closesWrite: Bool,
        completion: (any FlowDatagramCompletion)?, ecn: UInt8 = 0, trafficClass: TrafficClass? = nil
    ) {
        var send = FlowSend(data: Self.copy(content), isComplete: isComplete, closesWrite: closesWrite)
        send.datagramCompletion = completion
        send.ecn = ecn
        send.dscp = trafficClass.map { SocketOptionPlan.dscp($0) ?? 0 }
        submit(datagram: consume send)
    }

    private static func copy<Content: DataProtocol>(_ content: Content?) -> ByteBuffer? {
        guard let content else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: content.count)
        for region in content.regions { buffer.writeBytes(region) }
        return buffer
    }

    /// Queues a receive whose bytes arrive as `Data` (see `FlowReceiver`). The completion
    /// runs on the event loop.
    package func receive(
        minimum: Int, maximum: Int, dataCompletion: @escaping @Sendable (DataReceiveOutcome) -> Void
    ) {
        receive(minimum: minimum, maximum: maximum, receiver: FlowReceiver(dataCompletion))
    }

    /// Queues a receive that resumes the task suspended on `continuation` with its outcome.
    package func receive(minimum: Int, maximum: Int, resuming continuation: UnsafeContinuation<DataReceiveOutcome, Never>) {
        receive(minimum: minimum, maximum: maximum, receiver: FlowReceiver(resuming: continuation))
    }

    /// A whole message issued on the flow's event loop, sent at once when it can be (see
    /// `Flow+LoopCallers`): nil when it must be sent with `send(datagram:…)`, else its outcome
    /// (nil for success). `cancelled`, asked only when the message could go, keeps it back.
    package func sendMessageNow(
        _ data: Data, metadata: (any AnyObject & Sendable)?, unless cancelled: @autoclosure () -> Bool
    ) -> FlowError?? {
        sendMessageNowOnLoop(data, metadata: metadata, unless: cancelled)
    }

    /// A receive issued on the flow's event loop that completes at once, taken without a
    /// completion (see `Flow+LoopCallers`); nil when it must be queued with `receive`.
    /// `cancelled`, asked only when a message could be taken, keeps it there.
    package func receiveNow(minimum: Int, maximum: Int, unless cancelled: @autoclosure () -> Bool) -> DataReceiveOutcome? {
        receiveNowOnLoop(minimum: minimum, maximum: maximum, unless: cancelled).map(DataReceiveOutcome.init)
    }

    /// Runs `body` on the flow's event loop, later.
    package func executeOnLoop(_ body: @escaping @Sendable () -> Void) {
        eventLoop.execute(body)
    }

    /// The batcher that gathers the callbacks this flow's loop produces in one turn.
    package var deliveryBatcher: DeliveryBatcher { DeliveryBatcher.forEventLoop(eventLoop) }

    /// The facts a ready flow keeps for readers on any thread; call on its event loop (for
    /// example from its state handler, on `ready`).
    package func readyFactsOnLoop() -> FlowReadyFacts {
        eventLoop.preconditionInEventLoop()
        return FlowReadyFacts(
            local: localAddressOnLoop, remote: peerAddress, session: sessionFacts, quic: quicFactsOnLoop())
    }

    /// Calls `body` on the event loop with the establishment report as it is then.
    package func withReport(_ body: @escaping @Sendable (FlowReport) -> Void) {
        eventLoop.execute { body(self.report) }
    }

    /// Bytes received and not yet read by the application, and bytes it sent that the peer has
    /// not acknowledged (taken by the flow and not yet written, plus TCP_INFO's notsent and
    /// unacked). From any thread, never waiting: the flow's own counts are live; the kernel's
    /// part is read now on the event loop, and elsewhere is the loop's last reading, a fresh
    /// one being requested for the next call (see docs/connection-semantics.md).
    package func tcpBufferFacts(ready: Bool) -> (received: UInt32, unacknowledged: UInt32) {
        let received = unreadInboundBytes.load(ordering: .relaxed)
        let unwritten = UInt64(mailbox.budget { $0.unwritten })
        var kernel: UInt32 = 0
        if eventLoop.inEventLoop {
            kernel = kernelUnacknowledgedOnLoop() ?? 0
            if ready { kernelUnacknowledged.store(kernel, ordering: .relaxed) }
        } else if ready {
            // (Not ready yet: nothing was sent on the socket, the kernel part is 0.)
            kernel = kernelUnacknowledged.load(ordering: .relaxed)
            // One refresh on its way at a time, however often this is asked.
            if !kernelRefreshPending.exchange(true, ordering: .relaxed) {
                eventLoop.execute {
                    self.kernelRefreshPending.store(false, ordering: .relaxed)
                    self.kernelUnacknowledged.store(self.kernelUnacknowledgedOnLoop() ?? 0, ordering: .relaxed)
                }
            }
        }
        return (received, UInt32(clamping: unwritten + UInt64(kernel)))
    }

    /// TCP_INFO's notsent + unacked for the flow's socket (clamped to 32 bits), read now; on
    /// the loop only.
    private func kernelUnacknowledgedOnLoop() -> UInt32? {
        guard let info = tcpInfoOnLoop() else { return nil }
        return UInt32(clamping: UInt64(info.notsentBytes) + info.unacknowledgedBytes)
    }

    /// The kernel's TCP_INFO, read now; on the loop only, nil for datagram flows or without a
    /// socket. (On its own loop NIO completes a socket-option read before returning the future.)
    func tcpInfoOnLoop() -> LinuxTCPInfo? {
        eventLoop.preconditionInEventLoop()
        guard transportKind == .tcp, receives.mode == .stream, case .owned(let channel) = transport,
            let provider = channel as? SocketOptionProvider
        else { return nil }
        let future: EventLoopFuture<LinuxTCPInfo> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: Int32(IPPROTO_TCP)),
            name: NIOBSDSocket.Option(rawValue: TCP_INFO))
        let result = NIOLoopBoundBox<LinuxTCPInfo?>(nil, eventLoop: eventLoop)
        future.whenSuccess { result.value = $0 }
        return result.value
    }

    /// Caps the rate the flow's socket sends at, in bytes per second (`SO_MAX_PACING_RATE`);
    /// nil removes the cap.
    package func setMaximumPacingRate(bytesPerSecond rate: UInt64?) {
        // The option is 32 bits wide; all bits set means no cap.
        let value = rate.map { UInt32(clamping: $0) } ?? UInt32.max
        setSocketOption(level: SOL_SOCKET, name: LinuxConstants.SO_MAX_PACING_RATE, value: Int32(bitPattern: value))
    }

    /// Starts measuring data transfer: the counters now, for `FlowTransferMeasurement.finish`.
    package func startTransferMeasurement() -> FlowTransferMeasurement {
        FlowTransferMeasurement(flow: self)
    }

    /// The flow's cumulative counters, read on its loop (NIO's future stays in the engine).
    func transferCounters() -> EventLoopFuture<FlowTransferCounters> {
        eventLoop.submit {
            FlowTransferCounters(
                uptimeNanoseconds: NIODeadline.now().uptimeNanoseconds, sentBytes: self.report.sentBytes + self.mailbox.directlyWrittenBytes,
                receivedBytes: self.report.receivedBytes, tcp: self.tcpInfoOnLoop().map(TCPTransferCounters.init))
        }
    }
}
