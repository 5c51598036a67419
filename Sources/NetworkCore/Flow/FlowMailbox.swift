import Foundation
import DequeModule
import NIOCore
import NIOFoundationCompat
import NetworkSystem
import NetworkSync

/// Where a flow's operations from other threads wait for its event loop: the lock-protected
/// `FlowInbox` (the rules of when to wake the loop) and its `SendBudget`. Stored inline in the
/// flow, so it costs no allocation of its own. Each method answers whether the caller must now
/// wake the loop, which then drains the mailbox with `take()`.
///
/// The inbox also keeps the flow's `DirectSocket` (plain TCP connections we connected
/// ourselves): while the loop has armed direct writes (`FlowInbox.directWritesArmed`), a stream
/// send is written to the socket right here, on the sender's thread, instead of waking the loop;
/// only what the socket does not take goes to the loop.
struct FlowMailbox: ~Copyable {
    private let inbox = Lock(FlowInbox<FlowOperation>())

    /// Queues `operation`; true when the loop must be woken. See `FlowInbox.append` for `lazy`.
    func submit(_ operation: consuming FlowOperation, lazy: Bool = false) -> Bool {
        // Moved into the inbox, not copied (a copy retains what the operation holds).
        var pending: FlowOperation? = consume operation
        return inbox.withLock { inbox in
            guard let operation = pending.take() else { return false }
            return inbox.append(consume operation, lazy: lazy)
        }
    }

    /// See `FlowInbox.takeReady`.
    func takeReadyDatagram(maximum: Int) -> (datagram: QueuedMessage, resumeReading: Bool)? {
        inbox.withLock { $0.takeReady(maximum: maximum, isReceive: \.isReceive) }
    }

    /// See `FlowInbox.publishReady`.
    func publishReady(_ datagrams: Deque<QueuedMessage>) {
        inbox.withLock { $0.publishReady(datagrams) }
    }

    /// See `FlowInbox.readyRoom`.
    func readyRoom(count: Int, bytes: Int) -> Bool {
        inbox.withLock { $0.readyRoom(count: count, bytes: bytes) }
    }

    /// The writer of a plain UDP connection's socket (`DatagramPath.writer`), for the loop.
    var datagramWriter: DatagramWriter? {
        inbox.withLock { $0.existingDatagramWriter }
    }

    /// Gives the flow's datagrams `writer` (nil: lets go of it).
    func setDatagramWriter(_ writer: DatagramWriter?) {
        inbox.withLock { inbox in
            if writer == nil && inbox.existingDatagramWriter == nil { return }
            inbox.datagramPath().writer = writer
        }
    }

    /// Drops the datagrams left for other threads (the flow was cancelled).
    func dropReadyDatagrams() {
        _ = inbox.withLock { $0.reclaimReady() }
    }

    /// See `FlowInbox.isIdle`.
    var isIdle: Bool {
        inbox.withLock { $0.isIdle }
    }

    /// See `FlowInbox.takeLazy`.
    func takeLazy() -> [FlowOperation] {
        inbox.withLock { $0.takeLazy() }
    }

    /// See `FlowInbox.armRead`; true when the loop must be woken.
    func armRead(_ armed: Bool) -> Bool {
        inbox.withLock { $0.armRead(armed) }
    }

    /// Queues a stream send, admitting it to the send budget, or writes it to the socket from
    /// this thread when the loop armed direct writes. A send whose bytes fit (or went out)
    /// completes now: `completeNow` runs under the lock, so concurrent senders' completions keep
    /// their order. Answers whether the loop must be woken, and how many bytes went to the
    /// socket from this thread.
    func submitStreamSend(_ send: consuming FlowSend, completeNow: (FlowSend) -> Void) -> (wake: Bool, written: Int) {
        // (Consumed, and read without copying its bytes out: each copy of a send retains what
        // it holds.)
        let hasBytes = send.holdsBytes
        let claim = inbox.withLock { inbox -> (socket: DirectSocket?, spare: ByteBuffer?, keep: Bool) in
            if hasBytes, let socket = inbox.claimDirectWrite(bytes: send.byteCount, closesWrite: send.closesWrite) {
                return (socket, nil, false)
            }
            guard send.uncopied != nil else { return (nil, nil, false) }
            if inbox.keepsUncopied(bytes: send.byteCount, closesWrite: send.closesWrite) { return (nil, nil, true) }
            return (nil, inbox.spareBuffers.take(), false)
        }
        guard let socket = claim.socket else {
            // The copy happens outside the lock, into a buffer an earlier send was written from;
            // a large send is not copied at all if the loop can write it from the caller's `Data`.
            if !claim.keep { send.copyUncopied(into: claim.spare) }
            let wake = inbox.withLock { inbox -> Bool in
                let admission = inbox.admitSend(
                    bytes: send.byteCount, hasCompletion: send.completion != nil,
                    queuesHandler: !send.completionRunsInline, closesWrite: send.closesWrite)
                Self.take(admission, for: &send, completeNow: completeNow)
                return inbox.append(.send(Self.moveOut(&send)))
            }
            return (wake, 0)
        }
        let (written, failure) = Self.write(&send, to: socket)
        let wake = inbox.withLock { inbox -> Bool in
            if send.byteCount == 0 {
                let completes = send.completion != nil
                let wake = inbox.finishDirectWrite(
                    bytes: written, queuesHandler: completes && !send.completionRunsInline)
                if completes { completeNow(send) }
                return wake
            }
            // The rest goes through the loop, ahead of whatever was queued meanwhile.
            var wake = inbox.finishDirectWrite(bytes: written, queuesHandler: false)
            let admission = inbox.admitSend(
                bytes: send.byteCount, hasCompletion: send.completion != nil,
                queuesHandler: !send.completionRunsInline, closesWrite: send.closesWrite)
            Self.take(admission, for: &send, completeNow: completeNow)
            if inbox.prepend(.send(Self.moveOut(&send))) { wake = true }
            if let failure, inbox.prepend(.directWriteFailed(failure)) { wake = true }
            return wake
        }
        return (wake, written)
    }

    /// `send`, moved out of a variable a closure captured (which cannot be consumed), leaving
    /// a send that holds nothing.
    private static func moveOut(_ send: inout FlowSend) -> FlowSend {
        var moved = FlowSend(data: nil, isComplete: true, closesWrite: false)
        swap(&moved, &send)
        return moved
    }

    /// Notes the budget's answer on the send and, when it completes now, calls its completion
    /// and drops it (so the loop does not call it again).
    private static func take(
        _ admission: SendBudget.Admission, for send: inout FlowSend, completeNow: (FlowSend) -> Void
    ) {
        send.counted = admission.counted
        guard admission.completeNow else { return }
        completeNow(send)
        send.completion = nil
    }

    /// Everything queued, for the loop, and, when receives are among it, the ready datagrams
    /// (`FlowInbox.reclaimReady`), taken together so that no receive on another thread can
    /// take one in between.
    func take() -> (operations: [FlowOperation], reclaimed: Deque<QueuedMessage>) {
        inbox.withLock { inbox in
            let reclaimed = inbox.reclaimReadyForQueuedReceives(isReceive: \.isReceive)
            return (inbox.take(), reclaimed)
        }
    }

    /// Writes what the socket takes of the send's bytes now (straight from the caller's `Data`
    /// when they are still there: no copy at all); the send keeps the rest, in a buffer. A failed
    /// socket takes nothing and answers its error, which the loop must hear (`directWriteFailed`).
    private static func write(_ send: inout FlowSend, to socket: DirectSocket) -> (written: Int, failure: Int32?) {
        let outcome: DirectSocket.Outcome
        if let bytes = send.uncopied {
            outcome = bytes.withUnsafeBytes { socket.write($0) }
            let written = if case .wrote(let count) = outcome { count } else { 0 }
            send.uncopied = nil
            send.data = written == bytes.count ? nil : ByteBuffer(data: bytes.dropFirst(written))
        } else if var data = send.data {
            outcome = data.withUnsafeReadableBytes { socket.write($0) }
            if case .wrote(let count) = outcome { data.moveReaderIndex(forwardBy: count) }
            send.data = data.readableBytes == 0 ? nil : data
        } else {
            return (0, nil)
        }
        switch outcome {
        case .wrote(let count): return (count, nil)
        case .wouldBlock: return (0, nil)
        case .failed(let code): return (0, code)
        }
    }

    /// Gives the mailbox the flow's duplicate descriptor (on ready), or takes it away (nil; the
    /// duplicate closes when released). Taking it away disarms direct writes first.
    func setDirectSocket(_ newSocket: DirectSocket?) {
        inbox.withLock { inbox in
            if newSocket == nil { inbox.armDirectWrites(false) }
            inbox.directSocket = newSocket
        }
    }

    /// See `FlowInbox.directSocketForLoop`.
    var directSocketForLoop: DirectSocket? {
        inbox.withLock { $0.directSocketForLoop }
    }

    /// The loop arms (or disarms) direct writes; see `FlowInbox.armDirectWrites`.
    func armDirectWrites(_ armed: Bool) {
        inbox.withLock { $0.armDirectWrites(armed) }
    }

    /// Whether a send from another thread may now go to the socket directly.
    var directWritesArmed: Bool {
        inbox.withLock { $0.directWritesArmed }
    }

    /// Bytes written from senders' threads so far.
    var directlyWrittenBytes: UInt64 {
        inbox.withLock { $0.directlyWrittenBytes }
    }

    func beginBatch() {
        inbox.withLock { $0.beginBatch() }
    }

    /// True when the loop must be woken.
    func endBatch() -> Bool {
        inbox.withLock { $0.endBatch() }
    }

    /// See `Flow.callbackQueued`.
    func handlerQueued() {
        inbox.withLock { $0.handlerQueued() }
    }

    func handlerStarts(early: Bool) {
        inbox.withLock { $0.handlerStarts(early: early) }
    }

    /// True when the loop must be woken.
    func handlerEnded() -> Bool {
        inbox.withLock { $0.handlerEnded() }
    }

    /// The loop wrote (or dropped) a stream send (`SendBudget.settle`); `written`, the buffer its
    /// bytes were written from, is kept for a later send (`SendBufferPool`). True when the loop
    /// must schedule `checkSpareBuffers()` (`checkPool`), and whether no counted byte is left
    /// unwritten (`drained`; only then may direct writes be armed).
    func settle(
        bytes: Int, counted: Bool, calledCompletion: Bool, written: ByteBuffer?
    ) -> (checkPool: Bool, drained: Bool) {
        inbox.withLock { inbox in
            inbox.budget.settle(bytes: bytes, counted: counted, calledCompletion: calledCompletion)
            let drained = inbox.budget.unwritten == 0
            guard let written else { return (false, drained) }
            return (inbox.spareBuffers.give(written, limit: SendBudget.highWater), drained)
        }
    }

    /// See `SendBufferPool.check`; true when the loop must check again later.
    func checkSpareBuffers() -> Bool {
        inbox.withLock { $0.spareBuffers.check() }
    }

    /// Send buffers kept for reuse now.
    var spareBufferCount: Int {
        inbox.withLock { $0.spareBuffers.count }
    }

    #if DEBUG
    /// Send buffers handed out for reuse so far (debug builds).
    var spareBufferReuses: UInt32 {
        inbox.withLock { $0.spareBuffers.reuses }
    }
    #endif

    /// Lets the kept send buffers go (the flow ends).
    func emptySpareBuffers() {
        inbox.withLock { $0.spareBuffers.empty() }
    }

    /// Reads or changes the send budget under the lock.
    func budget<T: Sendable>(_ body: (inout SendBudget) -> T) -> T {
        inbox.withLock { body(&$0.budget) }
    }
}
