import Foundation
import NIOCore
import NetworkDNS

/// Operations issued on the flow's own event loop, by a task that prefers the loop's executor
/// (the 2025 API's scoped connections, a listener's connection tasks). Through the mailbox,
/// each would take a hop of its own, and each message send its own flush and system call: a
/// task that answers every message of a read wrote them one by one. Here, when nothing from
/// another thread waits in the mailbox (so nothing can be overtaken), a receive is served at
/// once (from what is buffered, without the task suspending) or queued directly with the
/// flow's receives, and, on a flow whose top layer takes messages (a framer, WebSocket, TLV,
/// Coder over a byte stream), a message goes through the layer at once, flushed with the others
/// of the same loop turn (as a NIO handler's writes are, at `channelReadComplete`). The send
/// then completes at once ("processed": the layer took it) while the channel is writable.
/// (A stream's bytes need none of this: a send from any thread already goes to the socket at
/// once, `FlowMailbox.submitStreamSend`.)
///
/// A task that keeps sending would keep the loop from everything else it serves (other
/// connections, reads, timers): after `loopBurstBytes` or `loopBurstMessages` unflushed, a send
/// goes the usual way, through the mailbox, and the task waits until it is written, after the
/// flush, which lets the loop go round. Once the socket stops taking bytes, the channel stops
/// being writable and every send goes that way.
extension Flow {
    /// Unflushed bytes of messages sent on the loop after which a send takes the usual way.
    static let loopBurstBytes: UInt32 = 64 * 1024
    /// Unflushed messages sent on the loop after which a send takes the usual way.
    static let loopBurstMessages: UInt16 = 256

    /// Whether a receive (or a message send) issued now may run at once (see above), asked first
    /// by every such operation, on any thread. (The loop's own fields are read only on the loop:
    /// asked from elsewhere, they raced with the loop's writes, as ThreadSanitizer reported.)
    /// Not on plain UDP, whose datagrams the loop may have left in the mailbox for receives on
    /// other threads (`mayLeaveReadyDatagrams`): a receive must take those first.
    var takesOperationsNow: Bool {
        eventLoop.inEventLoop && batchDepth == 0 && mailbox.isIdle && !mayLeaveReadyDatagrams
    }

    /// Sends a whole message issued on the loop through the message layer at once: nil when it
    /// must go the usual way (`send(datagram:…)`: no message layer, a full burst, …), or when
    /// `stop` (asked last) says so, else its outcome (it is then done).
    func sendMessageNowOnLoop(_ data: Data, metadata: (any AnyObject & Sendable)?, unless stop: () -> Bool) -> FlowError?? {
        guard takesOperationsNow, transportKind.isStream, datagramOutbox.isEmpty, uncopiedSends.isEmpty,
            !sendPath.writeClosed, !sendPath.holdsPartialMessage, loopUnflushedBytes < Self.loopBurstBytes,
            loopUnflushedMessages < Self.loopBurstMessages, case .write = machine.sendDecision,
            let layer = messageLayer, let channel = transport.channel, channel.isWritable, !stop()
        else { return nil }
        NetworkLog.traceConnection("send message of \(data.count) bytes (on the loop)", metadata: logMetadata)
        report.sentBytes += UInt64(data.count)
        layer.send(copying: data, metadata: metadata)
        needsFlush = true
        loopUnflushedBytes &+= UInt32(clamping: data.count)
        loopUnflushedMessages += 1
        if !loopFlushScheduled {
            loopFlushScheduled = true
            // After everything already queued on the loop: the task's next messages go too.
            eventLoop.execute { [self] in
                loopFlushScheduled = false
                loopUnflushedBytes = 0
                loopUnflushedMessages = 0
                flushIfNeeded()
            }
        }
        // A layer that failed on this message failed the flow with it (synchronously).
        if case .fail(let error) = machine.sendDecision { return .some(error) }
        return .some(nil)
    }

    /// A receive issued on the loop that completes at once: its outcome, taken from what is
    /// buffered without queueing a receiver; nil when it must wait (or ends the stream, or
    /// fails: those go the usual way), or when `stop` (asked last) says so.
    func receiveNowOnLoop(minimum: Int, maximum: Int, unless stop: () -> Bool) -> ReceiveOutcome? {
        guard takesOperationsNow, machine.receiveRejection == nil, !stop(),
            let outcome = receives.takeNow(minimum: minimum, maximum: maximum)
        else { return nil }
        requestReadIfNeeded()
        return outcome
    }
}
