import DequeModule
import NIOCore

/// A QUIC connection that carries one stream as a byte stream, as an `NWConnection` made with
/// `NWParameters.quic(alpn:)` does: the flow above reads and writes the stream as it would a TCP
/// socket. This is the bookkeeping (`QUICDatagramHandler` does the I/O): received bytes wait
/// until the flow asks for a read, so a flow that stops reading stops extending the peer's
/// window; writes complete once ngtcp2 has taken their bytes (sent them, congestion allowing).
struct QUICStreamBridge {
    /// The stream, once the handshake is done and it is opened.
    private(set) var stream: Int64?
    private var inbound = Deque<ByteBuffer>()
    /// The peer ended the stream (FIN); told to the flow after the bytes before it.
    private var inputEnded = false
    private var inputEndTold = false
    /// The flow asked for a read that has not been answered.
    private var readRequested = false
    /// Writes not yet taken by ngtcp2: the stream offset they end at, and their promise.
    private var pendingWrites = Deque<(end: UInt64, promise: EventLoopPromise<Void>?)>()
    private var queuedEnd: UInt64 = 0

    /// What the handler must do for the flow after an event.
    struct Delivery {
        var reads: [ByteBuffer] = []
        /// Tell the flow the stream's input ended (`ChannelEvent.inputClosed`).
        var inputEnded = false
    }

    /// The peer ended the stream (its FIN arrived), whether or not the flow has read to it.
    var inputFinished: Bool { inputEnded }

    mutating func opened(_ stream: Int64) {
        self.stream = stream
    }

    /// Bytes of `stream` arrived (its end with `isFinal`); false when they belong to another
    /// stream, which this connection does not carry.
    mutating func received(_ bytes: ByteBuffer, on stream: Int64, isFinal: Bool) -> Bool {
        guard stream == self.stream else { return false }
        if bytes.readableBytes > 0 { inbound.append(bytes) }
        if isFinal { inputEnded = true }
        return true
    }

    /// The flow asked for a read.
    mutating func readRequestedByFlow() {
        readRequested = true
    }

    /// What to hand the flow now: everything buffered (and then the end) when it asked.
    mutating func deliver() -> Delivery {
        var delivery = Delivery()
        guard readRequested else { return delivery }
        if !inbound.isEmpty {
            delivery.reads = Array(inbound)
            inbound.removeAll()
            readRequested = false
        }
        if inputEnded && !inputEndTold && inbound.isEmpty {
            inputEndTold = true
            delivery.inputEnded = true
        }
        return delivery
    }

    /// A write of `count` bytes was queued on the stream.
    mutating func queued(_ count: Int, promise: EventLoopPromise<Void>?) {
        queuedEnd += UInt64(count)
        pendingWrites.append((queuedEnd, promise))
    }

    /// ngtcp2 has taken the stream's bytes up to `sentOffset`: the writes that end there are
    /// done.
    mutating func sent(upTo sentOffset: UInt64) -> [EventLoopPromise<Void>?] {
        var done: [EventLoopPromise<Void>?] = []
        while let first = pendingWrites.first, first.end <= sentOffset {
            done.append(pendingWrites.removeFirst().promise)
        }
        return done
    }

    /// The connection is over: every write still pending fails.
    mutating func abandonWrites() -> [EventLoopPromise<Void>?] {
        defer { pendingWrites.removeAll() }
        return pendingWrites.map(\.promise)
    }
}
