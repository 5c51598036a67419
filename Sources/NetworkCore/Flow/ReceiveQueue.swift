#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DequeModule
import NIOCore

/// What one receive completes with.
package enum ReceiveOutcome: Equatable, Sendable {
    /// Bytes (nil when there are none, for example at end of stream). `isComplete` means the
    /// message is complete (datagrams) or the stream has ended (streams); `isFinal` marks end of
    /// stream. `message` is the metadata a framer delivered with the message (nil for none).
    case data(ByteBuffer?, isComplete: Bool, isFinal: Bool, message: (any AnyObject & Sendable)? = nil)
    case failure(FlowError)

    /// Equal bytes and flags, and the same message metadata object (or none on both sides).
    package static func == (lhs: ReceiveOutcome, rhs: ReceiveOutcome) -> Bool {
        switch (lhs, rhs) {
        case let (.data(a, aComplete, aFinal, aMessage), .data(b, bComplete, bFinal, bMessage)):
            return a == b && aComplete == bComplete && aFinal == bFinal && aMessage === bMessage
        case let (.failure(a), .failure(b)):
            return a == b
        default:
            return false
        }
    }
}

/// Inbound data and the receives waiting for it, as a value type. It enforces the data-path rules:
/// a stream receive completes with at least `minimum` bytes, at most `maximum`, or at end of
/// stream; a datagram receive returns one whole datagram (or the first `maximum` bytes of it, the
/// rest following in the next receive with `isComplete == true` at its end); receives complete in
/// the order they were issued; nothing is dropped.
///
/// `Token` is whatever the caller needs to find the completion again.
package struct ReceiveQueue<Token> {
    package enum Mode: Sendable { case stream, datagram }

    private struct Request {
        var minimum: Int
        var maximum: Int
        var token: Token
    }

    // (Declared in this order so the small fields fill the bytes `stream` leaves over: every
    // flow carries one queue, and a field order that pads costs every idle connection.)
    private var stream: ByteBuffer
    package private(set) var mode: Mode
    private var datagrams: Deque<QueuedMessage> = []
    private var pending: Deque<Request> = []
    /// Bytes buffered and not yet received. 32 bits (reading stops at the flow's high-water
    /// marks, far below 4 GiB) so the queue ends four bytes earlier and the flow's next field,
    /// a 32-bit mirror of this, fits beside it.
    package var bufferedBytes: Int { Int(buffered) }
    private var buffered: UInt32 = 0
    package private(set) var terminalError: FlowError?
    package private(set) var endOfStream = false
    /// The receive that reached the end of stream (`isFinal`) has been completed.
    package private(set) var endOfStreamDelivered = false

    package init(mode: Mode) {
        self.mode = mode
        self.stream = ByteBuffer()
    }

    /// From now on the queue carries a stream (a byte stream began above a framed one): waiting
    /// receives stay, messages already buffered become the start of the stream.
    package mutating func becomeStream() -> ReceiveCompletions<Token> {
        guard mode == .datagram else { return ReceiveCompletions() }
        mode = .stream
        let held = datagrams
        datagrams = []
        buffered = 0
        var out = ReceiveCompletions<Token>()
        for message in held {
            for completion in append(message.bytes) { out.append(completion) }
        }
        return out
    }

    package var pendingReceiveCount: Int { pending.count }
    package var bufferedDatagramCount: Int { datagrams.count }

    /// Queues a receive. Invalid bounds complete at once with `EINVAL`.
    /// Whether a receive may ask for these bounds (others fail at once with EINVAL).
    package static func validBounds(minimum: Int, maximum: Int) -> Bool {
        minimum >= 0 && maximum > 0 && minimum <= maximum
    }

    package mutating func enqueue(minimum: Int, maximum: Int, token: Token) -> ReceiveCompletions<Token> {
        if !Self.validBounds(minimum: minimum, maximum: maximum) {
            // Completing out of order here is harmless: this receive never waited.
            var out = ReceiveCompletions<Token>()
            out.append((token, .failure(.posix(EINVAL))))
            return out
        }
        pending.append(Request(minimum: minimum, maximum: maximum, token: token))
        return drain()
    }

    /// Adds bytes read from the transport (a chunk of stream, one datagram, or one framed message
    /// with its framer's `metadata`).
    package mutating func append(_ buffer: ByteBuffer, metadata: (any AnyObject & Sendable)? = nil) -> ReceiveCompletions<Token> {
        switch mode {
        case .stream:
            guard buffer.readableBytes > 0 else { return ReceiveCompletions() }
            buffered += UInt32(buffer.readableBytes)
            if stream.readableBytes == 0 {
                stream = buffer
            } else {
                // Reclaim the consumed front before growing, or a buffer that is never fully
                // drained would keep every byte ever received (memory must stay bounded).
                if stream.readerIndex > 0 && stream.readerIndex >= stream.readableBytes {
                    stream.discardReadBytes()
                }
                var b = buffer
                stream.writeBuffer(&b)
            }
        case .datagram:
            buffered += UInt32(buffer.readableBytes)
            datagrams.append(QueuedMessage(bytes: buffer, metadata: metadata))
        }
        return drain()
    }

    /// Every buffered datagram, in order, when no receive waits (else none): for receives on
    /// other threads to take (`FlowInbox.readyDatagrams`).
    package mutating func takeBufferedDatagrams() -> Deque<QueuedMessage> {
        guard mode == .datagram, pending.isEmpty, !datagrams.isEmpty else { return [] }
        // The queue itself changes hands (no copy of its datagrams): the usual reader has taken
        // every ready one by the time the loop publishes more, and the deque becomes the ready one.
        var taken: Deque<QueuedMessage> = []
        swap(&taken, &datagrams)
        buffered = 0
        return taken
    }

    /// Puts datagrams taken earlier (`takeBufferedDatagrams`) and not received back in front of
    /// everything buffered since, and completes the receives they serve.
    package mutating func prependDatagrams(_ messages: some Collection<QueuedMessage>) -> ReceiveCompletions<Token> {
        guard mode == .datagram, !messages.isEmpty else { return ReceiveCompletions() }
        for message in messages { buffered += UInt32(message.bytes.readableBytes) }
        datagrams.insert(contentsOf: messages, at: datagrams.startIndex)
        return drain()
    }

    /// The peer finished sending (stream protocols).
    package mutating func receivedEndOfStream() -> ReceiveCompletions<Token> {
        endOfStream = true
        return drain()
    }

    /// The transport failed; receives that cannot be served from buffered data get the error.
    package mutating func fail(_ error: FlowError) -> ReceiveCompletions<Token> {
        if terminalError == nil { terminalError = error }
        return drain()
    }

    /// Completes every pending receive with `error` at once and drops buffered data (cancel).
    package mutating func failAll(_ error: FlowError) -> ReceiveCompletions<Token> {
        terminalError = error
        stream = ByteBuffer()
        datagrams.removeAll()
        buffered = 0
        var out = ReceiveCompletions<Token>()
        for request in pending { out.append((request.token, .failure(error))) }
        pending.removeAll()
        return out
    }

    /// Whether the transport should read more: not finished, and the buffer is under `highWater`.
    /// A receive that is still short of its minimum keeps reading past `highWater`: the memory
    /// is then bounded by what the application itself asked for.
    package func wantsRead(highWater: Int) -> Bool {
        guard !endOfStream && terminalError == nil else { return false }
        if bufferedBytes < highWater { return true }
        if mode == .stream, let first = pending.first { return bufferedBytes < first.minimum }
        return false
    }

    /// What a receive issued now would complete with at once, taken without queueing it; nil
    /// when it would wait, when receives wait ahead of it, or when it would see the end of the
    /// stream or an error (those take the queue's way, which notes what they end).
    package mutating func takeNow(minimum: Int, maximum: Int) -> ReceiveOutcome? {
        guard pending.isEmpty, !endOfStream, terminalError == nil, Self.validBounds(minimum: minimum, maximum: maximum)
        else { return nil }
        return nextOutcome(minimum: minimum, maximum: maximum)
    }

    private mutating func drain() -> ReceiveCompletions<Token> {
        var out = ReceiveCompletions<Token>()
        while let request = pending.first, let outcome = nextOutcome(minimum: request.minimum, maximum: request.maximum) {
            pending.removeFirst()
            out.append((request.token, outcome))
        }
        return out
    }

    private mutating func nextOutcome(minimum: Int, maximum: Int) -> ReceiveOutcome? {
        switch mode {
        case .stream:
            let readable = stream.readableBytes
            if readable > 0 && readable >= max(minimum, 1) {
                return takeStream(min(readable, maximum))
            }
            if endOfStream {
                if readable > 0 { return takeStream(min(readable, maximum)) }
                endOfStreamDelivered = true
                return .data(nil, isComplete: true, isFinal: true)
            }
            if let terminalError { return .failure(terminalError) }
            return nil
        case .datagram:
            if var head = datagrams.first {
                if head.bytes.readableBytes <= maximum {
                    datagrams.removeFirst()
                    buffered -= UInt32(head.bytes.readableBytes)
                    return .data(head.bytes, isComplete: true, isFinal: false, message: head.metadata)
                }
                let part = head.bytes.readSlice(length: maximum) ?? ByteBuffer()
                datagrams[datagrams.startIndex] = head
                buffered -= UInt32(part.readableBytes)
                return .data(part, isComplete: false, isFinal: false, message: head.metadata)
            }
            // Messages framed over a stream end with it (datagram transports have no end).
            if endOfStream {
                endOfStreamDelivered = true
                return .data(nil, isComplete: true, isFinal: true)
            }
            if let terminalError { return .failure(terminalError) }
            return nil
        }
    }

    private mutating func takeStream(_ count: Int) -> ReceiveOutcome {
        let slice = stream.readSlice(length: count) ?? ByteBuffer()
        buffered -= UInt32(count)
        if stream.readableBytes == 0 {
            // Let the old storage go instead of keeping a large, fully read buffer alive.
            stream = ByteBuffer()
        }
        let finished = endOfStream && stream.readableBytes == 0
        if finished { endOfStreamDelivered = true }
        return .data(slice, isComplete: finished, isFinal: finished)
    }
}
