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
///
/// Over a byte stream (`gathers`), where message boundaries do not matter below, small writes
/// are copied into one buffer that spans messages (`gathered`) until the layer below is flushed
/// (`takeGathered`): a header and a body, and the messages of one flush, leave as one write
/// instead of a buffer and a pipeline write each (a 64-byte message's header and body cost four
/// allocations and two writes before). Pieces over `copyLimit` are not copied: they end the
/// gathered run and leave as they are, after it.
package struct FramerOutput {
    /// The largest piece copied into the gathered buffer.
    package static let copyLimit = 2048

    private var message = ByteBuffer()
    /// Pieces to hand over at `finish`, in order (a gathering output puts only its long pieces,
    /// and the run gathered before each, here).
    private var written: [ByteBuffer] = []
    private var gathered: ByteBuffer?
    package let gathers: Bool

    package init(gathers: Bool = false) {
        self.gathers = gathers
    }

    /// Bytes of the current message the framer has neither written nor consumed.
    package var unwrittenBytes: Int { message.readableBytes }

    /// Bytes gathered and not handed over yet.
    package var gatheredBytes: Int { gathered?.readableBytes ?? 0 }

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
        guard gathers, bytes.readableBytes <= Self.copyLimit else {
            endGatheredRun()
            written.append(bytes)
            return
        }
        var bytes = bytes
        startGathering()
        gathered!.writeBuffer(&bytes)
    }

    /// `writeOutput` of bytes not in a buffer yet: copied straight into the gathered buffer when
    /// there is one (no buffer of their own).
    package mutating func write<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return }
        guard gathers, bytes.count <= Self.copyLimit else {
            write(ByteBuffer(bytes: bytes))
            return
        }
        startGathering()
        gathered!.writeBytes(bytes)
    }

    /// `writeOutputNoCopy`: the next `length` bytes of the message, as they are.
    package mutating func writeNoCopy(length: Int) throws(FlowError) {
        guard length >= 0, let slice = message.readSlice(length: length) else { throw .posix(EINVAL) }
        write(slice)
    }

    /// What the framer wrote since the last call and is to leave now, in order (a gathering
    /// output keeps its gathered run for `takeGathered`); drops the message's leftover bytes
    /// and says how many there were.
    package mutating func finish() -> (written: [ByteBuffer], dropped: Int) {
        defer {
            written = []
            message = ByteBuffer()
        }
        return (written, message.readableBytes)
    }

    /// The gathered bytes, to be written below now (before a flush).
    package mutating func takeGathered() -> ByteBuffer? {
        defer { gathered = nil }
        return gathered
    }

    /// A buffer of its own (never a slice of a message: writing to that would copy it), with
    /// room for a flush's worth of small messages.
    private mutating func startGathering() {
        if gathered == nil { gathered = ByteBufferAllocator().buffer(capacity: 1024) }
    }

    /// A long piece follows: what was gathered before it leaves first.
    private mutating func endGatheredRun() {
        if let run = takeGathered() { written.append(run) }
    }
}
