#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import NetworkCore

/// The built-in TLV framer (`TLVFramer`) on a framer host with no connection (`FramerTranscript`),
/// with TLV's layout (`tlv-input`) or the Coder's length prefix (`coder-stream`). However the
/// stream is cut into reads, the same messages (and types) must come out and the same input must
/// be refused; the messages, written out again by the framer, must give back the bytes they came
/// from; and the host must hold no more than one message.
enum TLVFramerFuzzBody {
    /// Small, so that announced lengths over it are common inputs.
    static let maximumMessageLength = 4_096

    static func run(_ bytes: [UInt8], layout: TLVLayout) {
        let loop = EmbeddedEventLoop()
        let whole = read([bytes], layout: layout, on: loop)
        let pieces = read(FuzzChunks.split(bytes), layout: layout, on: loop)
        FuzzFailure.check(
            whole.messages.map(\.0) == pieces.messages.map(\.0) && whole.messages.map(\.1) == pieces.messages.map(\.1),
            "framing depends on how the stream was cut")
        FuzzFailure.check(whole.failure == pieces.failure, "input is refused or not depending on the cuts")
        if let failure = whole.failure {
            FuzzFailure.check(failure == .posix(EMSGSIZE), "only an oversized length is refused, not \(failure)")
        }
        // What came out, written again, is the input's prefix it was read from.
        let writer = FramerTranscript(TLVFramerFactory(layout: layout), eventLoop: loop)
        var rewritten: [UInt8] = []
        for (type, body) in whole.messages {
            for part in writer.send(body, metadata: type.map { TLVMetadata(type: $0) }) { rewritten += part.readableBytesView }
        }
        FuzzFailure.check(writer.failure == nil, "a message read could not be written back")
        FuzzFailure.check(rewritten.count <= bytes.count && Array(bytes.prefix(rewritten.count)) == rewritten, "messages do not write back to their bytes")
    }

    private static func read(
        _ chunks: [[UInt8]], layout: TLVLayout, on loop: EmbeddedEventLoop
    ) -> (messages: [(UInt64?, [UInt8])], failure: FlowError?) {
        let reader = FramerTranscript(TLVFramerFactory(layout: layout), eventLoop: loop, maximumMessageLength: maximumMessageLength)
        for chunk in chunks {
            reader.feed(chunk)
            FuzzFailure.check(reader.host.heldBytes <= maximumMessageLength + layout.headerSize + chunk.count, "input holds more than a message")
            if reader.failure != nil { break }
        }
        let messages = reader.delivered.map { ($0.metadata.map { ($0 as? TLVMetadata)?.type } ?? nil, Array($0.bytes.readableBytesView)) }
        return (messages, reader.failure)
    }
}
