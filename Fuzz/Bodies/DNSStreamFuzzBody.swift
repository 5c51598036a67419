import NIOCore
import NetworkDNS

/// DNS over TCP: the 16-bit length framing, fed in pieces, and each message it yields through
/// the message body. However the stream is cut, the same messages must come out.
enum DNSStreamFuzzBody {
    static func run(_ bytes: [UInt8]) {
        let whole = messages(in: [bytes])
        let pieces = messages(in: FuzzChunks.split(bytes))
        FuzzFailure.check(whole.messages == pieces.messages, "framing depends on how the stream was cut")
        FuzzFailure.check(whole.left == pieces.left, "framing keeps a different remainder depending on the cuts")
        for message in whole.messages { DNSMessageFuzzBody.run(message) }
    }

    private static func messages(in chunks: [[UInt8]]) -> (messages: [[UInt8]], left: Int) {
        var framer = DNSStreamFramer()
        var messages: [[UInt8]] = []
        for chunk in chunks {
            var buffer = ByteBuffer(bytes: chunk)
            framer.append(&buffer)
            while let message = framer.nextMessage() { messages.append(message) }
            FuzzFailure.check(framer.bufferedBytes <= 65_536 + 8, "framer holds more than one message")
        }
        return (messages, framer.bufferedBytes)
    }
}
