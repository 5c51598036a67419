import DequeModule
import NIOCore

/// The QUIC datagrams a connection has to send, oldest first, and what became of each one that
/// left the queue (nil: put in a packet), in the same order, until the owner takes them.
struct QUICDatagramQueue {
    private var pending = Deque<ByteBuffer>()
    private var results: [FlowError?] = []

    /// The datagram to put in the next packet.
    var next: ByteBuffer? { pending.first }

    mutating func append(_ datagram: ByteBuffer) {
        pending.append(datagram)
    }

    /// The next datagram left the queue: into a packet (nil), or refused with `error`.
    mutating func settleNext(_ error: FlowError?) {
        guard !pending.isEmpty else { return }
        pending.removeFirst()
        results.append(error)
    }

    /// The results since the last call, in queue order.
    mutating func takeResults() -> [FlowError?] {
        defer { results.removeAll(keepingCapacity: true) }
        return results
    }

    /// The connection is over: nothing more goes (its owner fails what it still waits for).
    mutating func discard() {
        pending.removeAll()
    }
}
