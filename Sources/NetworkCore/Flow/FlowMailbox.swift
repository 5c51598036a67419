import NIOCore
import NetworkSystem
import Synchronization

/// Where a flow's operations from other threads wait for its event loop: the lock-protected
/// `FlowInbox` (the rules of when to wake the loop) and its `SendBudget`. Stored inline in the
/// flow, so it costs no allocation of its own. Each method answers whether the caller must now
/// wake the loop, which then drains the mailbox with `take()`.
///
/// The inbox also keeps the flow's `DirectSocket` (plain TCP connections we connected ourselves): while
/// the loop has armed direct writes (`FlowInbox.directWritesArmed`), a stream send is written to
/// the socket right here, on the sender's thread and under the lock, instead of waking the loop;
/// only what the socket does not take goes to the loop.
struct FlowMailbox: ~Copyable {
    private let inbox = Mutex(FlowInbox<FlowOperation>())

    /// Queues `operation`; true when the loop must be woken. See `FlowInbox.append` for `lazy`.
    func submit(_ operation: FlowOperation, lazy: Bool = false) -> Bool {
        inbox.withLock { $0.append(operation, lazy: lazy) }
    }

    /// See `FlowInbox.takeLazy`.
    func takeLazy() -> [FlowOperation] {
        inbox.withLock { $0.takeLazy() }
    }

    /// See `FlowInbox.armRead`; true when the loop must be woken.
    func armRead(_ armed: Bool) -> Bool {
        inbox.withLock { $0.armRead(armed) }
    }

    /// Queues a stream send, admitting it to the send budget. A send whose bytes fit completes
    /// now: `completeNow` runs under the lock, so concurrent senders' completions keep their
    /// order. True when the loop must be woken.
    func submitStreamSend(_ send: FlowSend, completeNow: (FlowSend) -> Void) -> Bool {
        inbox.withLock { inbox -> Bool in
            var send = send
            if inbox.mayWriteDirectly(closesWrite: send.closesWrite), var data = send.data {
                switch writeDirectly(&data, to: inbox.directSocket) {
                case .all:
                    inbox.wroteDirectly(bytes: send.byteCount, completes: send.completion != nil)
                    if send.completion != nil { completeNow(send) }
                    return false
                case .some(let written):
                    // The rest goes through the loop, behind nothing (the queue was empty).
                    inbox.wroteDirectly(bytes: written, completes: false)
                    send.data = data
                case .none:
                    break
                }
            }
            let admission = inbox.admitSend(
                bytes: send.byteCount, hasCompletion: send.completion != nil, closesWrite: send.closesWrite)
            send.counted = admission.counted
            if admission.completeNow {
                completeNow(send)
                send.completion = nil
            }
            return inbox.append(.send(send))
        }
    }

    /// Everything queued, for the loop.
    func take() -> [FlowOperation] {
        inbox.withLock { $0.take() }
    }

    private enum DirectWrite {
        case all
        case some(Int)
        case none
    }

    /// Writes what the socket takes of `data` now (called under the inbox lock, which orders
    /// direct writes against each other and against the loop's arming); `data` keeps the rest.
    private func writeDirectly(_ data: inout ByteBuffer, to socket: DirectSocket?) -> DirectWrite {
        guard let socket else { return .none }
        let outcome = data.withUnsafeReadableBytes { socket.write($0) }
        guard case .wrote(let count) = outcome, count > 0 else { return .none }
        data.moveReaderIndex(forwardBy: count)
        return data.readableBytes == 0 ? .all : .some(count)
    }

    /// Gives the mailbox the flow's duplicate descriptor (on ready), or takes it away (nil; the
    /// duplicate closes when released). Taking it away disarms direct writes first.
    func setDirectSocket(_ newSocket: DirectSocket?) {
        inbox.withLock { inbox in
            if newSocket == nil { inbox.armDirectWrites(false) }
            inbox.directSocket = newSocket
        }
    }

    /// The loop arms (or disarms) direct writes; see `FlowInbox.armDirectWrites`.
    func armDirectWrites(_ armed: Bool) {
        inbox.withLock { $0.armDirectWrites(armed) }
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

    func handlerStarts(early: Bool) {
        inbox.withLock { $0.handlerStarts(early: early) }
    }

    /// True when the loop must be woken.
    func handlerEnded() -> Bool {
        inbox.withLock { $0.handlerEnded() }
    }

    /// Reads or changes the send budget under the lock.
    func budget<T: Sendable>(_ body: (inout SendBudget) -> T) -> T {
        inbox.withLock { body(&$0.budget) }
    }
}
