#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkCore

/// The framer host's input side (`FramerInput`) under a type-and-length framer written as
/// Apple's samples write theirs (4-byte type, 4-byte length, big-endian; body delivered without
/// copying). However the stream is cut into reads, the same messages must come out, the same
/// lengths must be refused, and the input must hold no more than one message.
enum FramerInputFuzzBody {
    /// Small, so that announced lengths over it are common inputs.
    static let maximumMessageLength = 4_096

    static func run(_ bytes: [UInt8]) {
        let whole = messages(in: [bytes])
        let pieces = messages(in: FuzzChunks.split(bytes))
        FuzzFailure.check(whole.messages == pieces.messages, "framing depends on how the stream was cut")
        FuzzFailure.check(whole.refused == pieces.refused, "a length is refused or not depending on the cuts")
    }

    private static func messages(in chunks: [[UInt8]]) -> (messages: [[UInt8]], refused: Bool) {
        var input = FramerInput<UInt32>(maximumMessageLength: maximumMessageLength)
        var messages: [[UInt8]] = []
        do {
            for chunk in chunks {
                if let whole = try input.append(ByteBuffer(bytes: chunk)) { messages.append(Array(whole.bytes.readableBytesView)) }
                while input.wantsFramer {
                    let before = input.bufferedBytes
                    input.framerNeeds(try handleInput(&input, into: &messages))
                    if input.bufferedBytes == before { break }
                }
                FuzzFailure.check(input.heldBytes <= maximumMessageLength + 8 + chunk.count, "input holds more than a message")
            }
        } catch {
            FuzzFailure.check(error == .posix(EMSGSIZE), "only an oversized length is refused, not \(error)")
            return (messages, true)
        }
        return (messages, false)
    }

    /// The framer's `handleInput`.
    private static func handleInput(_ input: inout FramerInput<UInt32>, into messages: inout [[UInt8]]) throws(FlowError) -> Int {
        while true {
            var header: (type: UInt32, length: Int)?
            let parsed = input.parse(minimum: 8, maximum: 8) { buffer, _ in
                guard let buffer, buffer.count >= 8 else { return 0 }
                let type = buffer[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let length = buffer[4..<8].reduce(0) { $0 << 8 | Int($1) }
                header = (type, length)
                return 8
            }
            guard parsed, let header else { return 8 }
            let (whole, delivered) = try input.deliver(length: header.length, message: header.type, isComplete: true)
            if let whole { messages.append(Array(whole.bytes.readableBytesView)) }
            if !delivered { return 0 }
        }
    }
}
