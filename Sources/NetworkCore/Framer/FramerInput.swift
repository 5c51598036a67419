#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The input side of a hosted message framer, as a value: the bytes received from the protocol
/// below and not yet parsed, and Apple's `NWProtocolFramer.Instance` input contract over them.
///
/// - `parse` shows the framer up to `maximum` buffered bytes once at least `minimum` are there
///   (or the input has ended: then whatever is left, nil if nothing, with `isComplete`), and
///   consumes as many as the closure returns; it says whether the closure ran.
/// - `deliver(length:)` (`deliverInputNoCopy`) turns the next `length` bytes into a message. When
///   fewer are buffered, the rest is owed: bytes that arrive go to the message first, and the
///   framer is not asked to parse again until the message is whole. It says whether the message
///   was delivered at once.
/// - The framer's answer from `handleInput` is how many bytes it needs before it is asked again.
///
/// Messages leave whole (`Delivery`): parts the framer marks incomplete are joined to the next,
/// up to `maximumMessageLength`, beyond which input fails with `EMSGSIZE` (a peer announcing a
/// 4 GiB length gets that at once, not 4 GiB of memory).
package struct FramerInput<Message> {
    /// A whole message, ready for the application.
    package struct Delivery {
        package var bytes: ByteBuffer
        package var message: Message
    }

    /// The longest message this input assembles.
    package let maximumMessageLength: Int
    private var buffer = ByteBuffer()
    /// The protocol below will send nothing more.
    package private(set) var ended = false
    /// A message being assembled: its bytes so far, and its metadata.
    private var partial: (bytes: ByteBuffer, message: Message)?
    /// Bytes the last `deliver(length:)` is still owed, and whether they end the message.
    private var owed: (remaining: Int, isComplete: Bool)?
    /// How many buffered bytes the framer wants before it is asked again (`handleInput`'s answer).
    private var wanted = 1

    package init(maximumMessageLength: Int) {
        self.maximumMessageLength = maximumMessageLength
    }

    /// Bytes received and not yet parsed or delivered.
    package var bufferedBytes: Int { buffer.readableBytes }

    /// Bytes held in all, parsed or not: what this connection's input costs in memory.
    package var heldBytes: Int { buffer.readableBytes + (partial?.bytes.readableBytes ?? 0) }

    /// Whether the framer should be asked to handle input now: nothing is owed, and enough bytes
    /// are buffered (or the input ended with some left).
    package var wantsFramer: Bool {
        guard owed == nil else { return false }
        if ended { return buffer.readableBytes > 0 }
        return buffer.readableBytes >= wanted
    }

    /// What the framer's `handleInput` returned: the bytes it needs before the next call.
    package mutating func framerNeeds(_ count: Int) {
        wanted = max(1, count)
    }

    /// Adds bytes from the protocol below; returns the message they completed, if any.
    package mutating func append(_ bytes: ByteBuffer) throws(FlowError) -> Delivery? {
        var bytes = bytes
        var delivered: Delivery?
        if let (remaining, isComplete) = owed {
            let take = min(remaining, bytes.readableBytes)
            if let slice = bytes.readSlice(length: take) {
                delivered = try add(slice, complete: take == remaining && isComplete, to: nil)
            }
            owed = take == remaining ? nil : (remaining - take, isComplete)
        }
        if bytes.readableBytes > 0 {
            if buffer.readableBytes == 0 {
                buffer = bytes
            } else {
                if buffer.readerIndex > 0 && buffer.readerIndex >= buffer.readableBytes { buffer.discardReadBytes() }
                buffer.writeBuffer(&bytes)
            }
        }
        return delivered
    }

    /// The protocol below ended its input.
    package mutating func endOfInput() {
        ended = true
    }

    /// `parseInput`: runs `body` over up to `maximum` buffered bytes if at least `minimum` are
    /// there (or the input has ended), consuming what it returns. Whether `body` ran.
    package mutating func parse(
        minimum: Int, maximum: Int, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int
    ) -> Bool {
        guard owed == nil else { return false }
        guard buffer.readableBytes >= max(minimum, 0) || ended else { return false }
        buffer.showToFramer(upTo: maximum, isComplete: ended, body)
        return true
    }

    /// `deliverInputNoCopy`: the next `length` bytes are (part of) a message. Returns the message
    /// if it is now whole, and whether all `length` bytes were there (false: the rest is owed).
    package mutating func deliver(length: Int, message: Message, isComplete: Bool) throws(FlowError) -> (Delivery?, Bool) {
        guard owed == nil, length >= 0 else { throw .posix(EINVAL) }
        guard (partial?.bytes.readableBytes ?? 0) + length <= maximumMessageLength else { throw .posix(EMSGSIZE) }
        let take = min(length, buffer.readableBytes)
        let slice = buffer.readSlice(length: take) ?? ByteBuffer()
        if take < length {
            _ = try add(slice, complete: false, to: message)
            owed = (length - take, isComplete)
            return (nil, false)
        }
        return (try add(slice, complete: isComplete, to: message), true)
    }

    /// `deliverInput`: `bytes` of the framer's own are (part of) a message.
    package mutating func deliver(_ bytes: ByteBuffer, message: Message, isComplete: Bool) throws(FlowError) -> Delivery? {
        try add(bytes, complete: isComplete, to: message)
    }

    /// Everything still buffered, unparsed, for a framer that passes its input through.
    package mutating func takeBuffered() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer
    }

    /// Joins `bytes` to the message being assembled (started with `message` if there is none).
    private mutating func add(_ bytes: ByteBuffer, complete: Bool, to message: Message?) throws(FlowError) -> Delivery? {
        var bytes = bytes
        if let (stored, first) = partial {
            var assembled = stored
            guard assembled.readableBytes + bytes.readableBytes <= maximumMessageLength else { throw .posix(EMSGSIZE) }
            assembled.writeBuffer(&bytes)
            partial = nil
            if complete { return Delivery(bytes: assembled, message: first) }
            partial = (assembled, first)
            return nil
        }
        guard let message else { return nil }
        guard bytes.readableBytes <= maximumMessageLength else { throw .posix(EMSGSIZE) }
        if complete { return Delivery(bytes: bytes, message: message) }
        // Its own storage: the slice would pin the whole receive buffer while the rest arrives.
        var copy = ByteBufferAllocator().buffer(capacity: bytes.readableBytes)
        copy.writeBuffer(&bytes)
        partial = (copy, message)
        return nil
    }
}
