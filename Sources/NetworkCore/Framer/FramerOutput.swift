#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The output side of a hosted message framer, as a value: the bytes of the message the
/// framer's `handleOutput` is working on, and what it has written so far, in order.
///
/// - `parse` (`parseOutput`) shows the framer the message's bytes that are still unwritten
///   (at least `minimum`, at most `maximum`), consuming what the closure returns.
/// - `write` (`writeOutput`) adds bytes of the framer's own; `writeNoCopy(length:)`
///   (`writeOutputNoCopy`) moves the next `length` bytes of the message through as they are, and
///   fails with `EINVAL` if the message has fewer left.
/// - `finish` hands over what was written, for the protocol below; message bytes the framer
///   neither wrote nor consumed are dropped (and counted), as the framer chose not to send them.
package struct FramerOutput {
    private var message = ByteBuffer()
    private var written: [ByteBuffer] = []

    package init() {}

    /// Bytes of the current message the framer has neither written nor consumed.
    package var unwrittenBytes: Int { message.readableBytes }

    /// Starts on a message from the application.
    package mutating func begin(_ bytes: ByteBuffer) {
        message = bytes
    }

    /// `parseOutput`: runs `body` over up to `maximum` unwritten message bytes if at least
    /// `minimum` are there, consuming what it returns. Whether `body` ran.
    package mutating func parse(
        minimum: Int, maximum: Int, isComplete: Bool, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int
    ) -> Bool {
        guard message.readableBytes >= max(minimum, 0) else { return false }
        message.showToFramer(upTo: maximum, isComplete: isComplete, body)
        return true
    }

    /// `writeOutput`: bytes of the framer's own, after what it wrote before.
    package mutating func write(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        written.append(bytes)
    }

    /// `writeOutputNoCopy`: the next `length` bytes of the message, as they are.
    package mutating func writeNoCopy(length: Int) throws(FlowError) {
        guard length >= 0, let slice = message.readSlice(length: length) else { throw .posix(EINVAL) }
        write(slice)
    }

    /// What the framer wrote since the last call, in order; drops the message's leftover bytes
    /// and says how many there were.
    package mutating func finish() -> (written: [ByteBuffer], dropped: Int) {
        defer {
            written = []
            message = ByteBuffer()
        }
        return (written, message.readableBytes)
    }
}
