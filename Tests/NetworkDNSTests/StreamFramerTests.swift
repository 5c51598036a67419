import NIOCore
import Testing
@testable import NetworkDNS

/// `DNSStreamFramer`: DNS over TCP's 16-bit length framing, fed in pieces.
@Suite("DNS stream framing")
struct StreamFramerTests {
    private func feed(_ pieces: [[UInt8]]) -> (messages: [[UInt8]], left: Int) {
        var framer = DNSStreamFramer()
        var messages: [[UInt8]] = []
        for piece in pieces {
            var buffer = ByteBuffer(bytes: piece)
            framer.append(&buffer)
            while let message = framer.nextMessage() { messages.append(message) }
        }
        return (messages, framer.bufferedBytes)
    }

    @Test func splitsMessagesHoweverTheyArrive() {
        let stream: [UInt8] = [0, 3, 1, 2, 3, 0, 0, 0, 2, 9, 9, 0, 5, 1]
        let whole = feed([stream])
        #expect(whole.messages == [[1, 2, 3], [], [9, 9]])
        #expect(whole.left == 3)
        #expect(feed(stream.map { [$0] }).messages == whole.messages)
        #expect(feed(stream.map { [$0] }).left == 3)
    }

    @Test func keepsOnlyTheIncompleteMessage() {
        var framer = DNSStreamFramer()
        var buffer = ByteBuffer(bytes: [0, 1, 7, 0xFF])
        framer.append(&buffer)
        #expect(framer.nextMessage() == [7])
        #expect(framer.nextMessage() == nil)
        #expect(framer.bufferedBytes == 1)
    }
}
