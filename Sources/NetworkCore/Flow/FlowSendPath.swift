#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DequeModule
import NIOCore

/// The sending side of a flow as a value type: the sends that wait for `ready`, the datagram
/// being put together from incomplete sends, and whether the sending side was closed. It decides
/// what each send becomes on the wire; the flow carries that out (promises, socket writes).
package struct FlowSendPath {
    /// Sends issued before the flow was ready, in order.
    package private(set) var queued: Deque<FlowSend> = []
    /// The incomplete sends of the datagram being assembled.
    private var partialDatagram: ByteBuffer?
    /// Part of a message waits for the rest (sends with `isComplete` false).
    package var holdsPartialMessage: Bool { partialDatagram != nil }
    /// A final send closed the sending side: later sends fail with `EPIPE`.
    package private(set) var writeClosed = false
    /// The socket refuses datagrams over the path MTU (`EMSGSIZE`) rather than fragment them,
    /// so any datagram may fail on its own (see `DatagramOutbox`).
    package var fragmentationDisabled = false
    /// The socket marks its datagrams with a service class's DSCP: a per-datagram ECN control
    /// message through NIO (the codepoint alone) would clear it, so none is sent.
    package var socketHasDSCP = false

    package init() {}

    /// What one send becomes.
    package enum Step: Equatable {
        /// Write these bytes (nil: none) and, if `closesOutput`, shut the sending side after.
        case stream(ByteBuffer?, closesOutput: Bool)
        /// Send the send's bytes as one datagram.
        case datagram
        /// Nothing to write (part of a datagram still incomplete, or a bare completion): the
        /// send is done as taken.
        case absorbed
        /// The send fails with this error.
        case rejected(FlowError)
    }

    /// A send waits for `ready`.
    package mutating func hold(_ send: FlowSend) {
        queued.append(send)
    }

    /// Every waiting send, in order; the queue is left empty.
    package mutating func takeQueued() -> Deque<FlowSend> {
        defer { queued = [] }
        return queued
    }

    /// The first `count` waiting sends (those a Fast Open SYN already carried).
    package mutating func takeFirst(_ count: Int) -> [FlowSend] {
        let taken = Array(queued.prefix(count))
        queued.removeFirst(taken.count)
        return taken
    }

    /// The idempotent sends (no completion, not final) at the head of the queue, joined: what
    /// TCP Fast Open may carry in a SYN, and how many sends that is. Nil when there is nothing.
    package func fastOpenData() -> (data: ByteBuffer, sends: Int)? {
        var joined = ByteBuffer()
        var count = 0
        for send in queued {
            guard send.completion == nil, !send.closesWrite else { break }
            if var data = send.data { joined.writeBuffer(&data) }
            count += 1
        }
        return count > 0 && joined.readableBytes > 0 ? (joined, count) : nil
    }

    /// The sending side is closed from the start (a QUIC stream only the peer sends on): every
    /// send fails with `EPIPE`.
    package mutating func closeWrite() {
        writeClosed = true
    }

    /// What `send` becomes on a ready flow of this kind. A datagram is left in `send` as its
    /// bytes (moved, not copied: a buffer carried out in the step was copied once more and
    /// released); a stream send keeps its bytes, which its completion still reports.
    package mutating func step(_ send: inout FlowSend, datagrams: Bool) -> Step {
        if writeClosed { return .rejected(.posix(EPIPE)) }
        guard datagrams else {
            let closes = send.isComplete && send.closesWrite
            if closes { writeClosed = true }
            let data = send.data.flatMap { $0.readableBytes > 0 ? $0 : nil }
            return .stream(data, closesOutput: closes)
        }
        if var partial = partialDatagram {
            partialDatagram = nil
            if var data = send.takeData() { partial.writeBuffer(&data) }
            send.data = partial
        } else if !send.holdsBuffer {
            // A bare completion (for example a final context on UDP): nothing to send.
            if send.isComplete { return .absorbed }
            send.data = ByteBuffer()
        }
        guard send.isComplete else {
            partialDatagram = send.takeData()
            return .absorbed
        }
        return .datagram
    }
}
