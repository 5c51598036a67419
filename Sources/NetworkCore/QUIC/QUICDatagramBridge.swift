import DequeModule
import NIOCore

/// A QUIC connection that carries its datagrams (RFC 9221) for the flow above, as an
/// `NWConnection` made with `NWParameters.quicDatagram(alpn:)` does: each write is one datagram
/// and each read one datagram. This is the bookkeeping (`QUICDatagramHandler` does the I/O):
/// received datagrams wait until the flow asks for a read, at most `inboundLimit` of them
/// (beyond, new ones are dropped, as a full socket buffer drops UDP datagrams: QUIC datagrams
/// are unreliable); a write completes once its datagram is in a packet.
struct QUICDatagramBridge {
    /// The most received datagrams held for a flow that does not read.
    static let inboundLimit = 1_024

    private var inbound = Deque<ByteBuffer>()
    private var readRequested = false
    /// Promises of the datagrams written, in order; with the error of one refused at once
    /// (settled in its turn, after those before it).
    private var pendingWrites = Deque<(promise: EventLoopPromise<Void>?, refused: FlowError?)>()
    /// Datagrams dropped because the flow did not read (for the log).
    private(set) var dropped = 0

    /// A datagram arrived; false when it was dropped (the flow is `inboundLimit` behind).
    mutating func received(_ datagram: ByteBuffer) -> Bool {
        guard inbound.count < Self.inboundLimit else {
            dropped += 1
            return false
        }
        inbound.append(datagram)
        return true
    }

    /// The flow asked for a read.
    mutating func readRequestedByFlow() {
        readRequested = true
    }

    /// The datagrams to hand the flow now: everything held, once it asked.
    mutating func deliver() -> [ByteBuffer] {
        guard readRequested, !inbound.isEmpty else { return [] }
        readRequested = false
        defer { inbound.removeAll() }
        return Array(inbound)
    }

    /// A datagram was queued on the connection.
    mutating func queued(promise: EventLoopPromise<Void>?) {
        pendingWrites.append((promise, nil))
    }

    /// A datagram the connection refused (too large); true when its promise may fail now,
    /// false when it waits behind datagrams written before it (completions stay in order).
    mutating func refused(_ error: FlowError, promise: EventLoopPromise<Void>?) -> Bool {
        guard !pendingWrites.isEmpty else { return true }
        pendingWrites.append((promise, error))
        return false
    }

    /// The results of the oldest queued datagrams, in order (`QUICConnectionBinding.
    /// takeDatagramResults()`): each with its promise, and the refused ones in their turn.
    mutating func settled(_ results: [FlowError?]) -> [(promise: EventLoopPromise<Void>?, error: FlowError?)] {
        var results = results[...]
        var done: [(promise: EventLoopPromise<Void>?, error: FlowError?)] = []
        while let first = pendingWrites.first {
            if let refused = first.refused {
                done.append((first.promise, refused))
            } else if let result = results.popFirst() {
                done.append((first.promise, result))
            } else {
                break
            }
            pendingWrites.removeFirst()
        }
        return done
    }

    /// The connection is over: every datagram still queued fails.
    mutating func abandonWrites() -> [EventLoopPromise<Void>?] {
        defer { pendingWrites.removeAll() }
        return pendingWrites.map(\.promise)
    }
}
