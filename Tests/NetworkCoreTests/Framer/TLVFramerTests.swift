#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import PeerSupport
import Testing

@testable import NetworkCore

/// The built-in TLV framer (and the Coder's length prefix) on a framer host with no connection
/// (`FramerTranscript`): what it writes, and what it makes of that input however it is cut.
@Suite("Core.TLVFramer")
struct TLVFramerTests {
    static let messages: [(type: UInt64, body: [UInt8])] = [
        (1, Array("hello".utf8)), (2, []), (0xFFFF_FFFF, [0]), (7, (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
        (3, Array(repeating: 0xAB, count: 64)),
    ]

    static func transcript(_ layout: TLVLayout, datagrams: Bool = false, maximum: Int = FramerHost.defaultMaximumMessageLength) -> FramerTranscript {
        FramerTranscript(
            TLVFramerFactory(layout: layout), eventLoop: EmbeddedEventLoop(), writesDatagrams: datagrams, maximumMessageLength: maximum)
    }

    /// The wire form of `messages` as the framer writes them.
    static func wire(_ layout: TLVLayout, _ messages: [(type: UInt64, body: [UInt8])]) -> [UInt8] {
        let writer = transcript(layout)
        var bytes: [UInt8] = []
        for (type, body) in messages {
            for var part in writer.send(body, metadata: layout.hasType ? TLVMetadata(type: type) : nil) {
                bytes += part.readBytes(length: part.readableBytes) ?? []
            }
        }
        #expect(writer.failure == nil)
        return bytes
    }

    /// What the framer delivers for `bytes` cut into `chunks`: (type, body) per message.
    static func read(_ layout: TLVLayout, _ chunks: [[UInt8]]) -> (messages: [(UInt64?, [UInt8])], failure: FlowError?) {
        let reader = transcript(layout)
        for chunk in chunks { reader.feed(chunk) }
        let messages = reader.delivered.map { message in
            ((message.metadata as? TLVMetadata)?.type, Array(message.bytes.readableBytesView))
        }
        return (messages, reader.failure)
    }

    static func cuts(_ bytes: [UInt8], using generator: inout SeededGenerator) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let size = Int.random(in: 1...64, using: &generator)
            chunks.append(Array(bytes[offset..<min(bytes.count, offset + size)]))
            offset += size
        }
        return chunks
    }

    @Test("TLV's wire format: a UInt32 type and a UInt32 length, big-endian, then the body")
    func wireFormat() {
        #expect(Self.wire(.tlv, [(0x0102_0304, [9, 9])]) == [1, 2, 3, 4, 0, 0, 0, 2, 9, 9])
        #expect(Self.wire(.lengthPrefixed, [(0, [7])]) == [0, 0, 0, 1, 7])
        #expect(Self.wire(TLVLayout(typeWidth: 1, lengthWidth: 2)!, [(5, [1, 2, 3])]) == [5, 0, 3, 1, 2, 3])
    }

    @Test("fed whole, byte by byte and in random cuts, the same messages and types come out", arguments: [
        TLVLayout.tlv, .lengthPrefixed, TLVLayout(typeWidth: 1, lengthWidth: 2)!, TLVLayout(typeWidth: 8, lengthWidth: 8)!,
    ])
    func sameMessagesWhateverTheCuts(layout: TLVLayout) {
        // (A 1-byte type cannot carry the larger types, nor a 2-byte length... these fit.)
        let messages = Self.messages.map { (layout.typeWidth == 1 ? $0.type & 0x7F : $0.type, $0.body) }
        let bytes = Self.wire(layout, messages)
        let expected = messages.map { (layout.hasType ? $0.0 : nil, $0.1) }
        var splits: [[[UInt8]]] = [[bytes], bytes.map { [$0] }]
        var generator = SeededGenerator(state: 12)
        for _ in 0..<20 { splits.append(Self.cuts(bytes, using: &generator)) }
        for chunks in splits {
            let (got, failure) = Self.read(layout, chunks)
            #expect(failure == nil)
            #expect(got.map(\.0) == expected.map(\.0), "types, \(chunks.count) chunks")
            #expect(got.map(\.1) == expected.map(\.1), "bodies, \(chunks.count) chunks")
        }
    }

    @Test("a length over the bound fails with EMSGSIZE at once, nothing buffered: 4 GiB, and 2^64 - 1 in an 8-byte field")
    func oversizedLengthsFailAtOnce() {
        let reader = Self.transcript(.tlv, maximum: 1_024)
        reader.feed([0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        #expect(reader.failure == .posix(EMSGSIZE))
        #expect(reader.host.heldBytes <= 3, "no body buffered")
        let wide = Self.read(TLVLayout(typeWidth: 8, lengthWidth: 8)!, [[UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8)])
        #expect(wide.failure == .posix(EMSGSIZE))
        // At the bound exactly, the message comes through.
        let atBound = Self.read(.lengthPrefixed, [[0, 0, 0x04, 0x00] + [UInt8](repeating: 1, count: 1_024)])
        #expect(atBound.failure == nil && atBound.messages.count == 1)
    }

    @Test("a type or a length too wide for its field fails the connection rather than go out cut")
    func outputThatDoesNotFit() {
        let narrow = TLVLayout(typeWidth: 1, lengthWidth: 1)!
        let typeTooWide = Self.transcript(narrow)
        #expect(typeTooWide.send([1], metadata: TLVMetadata(type: 256)).isEmpty)
        #expect(typeTooWide.failure == .posix(EINVAL))
        let tooLong = Self.transcript(narrow)
        #expect(tooLong.send([UInt8](repeating: 0, count: 256), metadata: TLVMetadata(type: 1)).isEmpty)
        #expect(tooLong.failure == .posix(EMSGSIZE))
        #expect(TLVLayout(typeWidth: 3, lengthWidth: 4) == nil && TLVLayout(typeWidth: 4, lengthWidth: 0) == nil)
    }

    @Test("over datagrams the header and the body leave as one write; without metadata the type is 0")
    func oneDatagramPerMessage() {
        let writer = Self.transcript(.tlv, datagrams: true)
        let written = writer.send([5, 6])
        #expect(written.count == 1)
        #expect(written.first.map { Array($0.readableBytesView) } == [0, 0, 0, 0, 0, 0, 0, 2, 5, 6])
    }

    @Test("the Coder's framing: a length prefix over a stream, nothing (one value per datagram) over datagrams")
    func coderFraming() {
        #expect(CoderFraming(transport: .tcp).framers.map(\.label) == ["Coder"])
        #expect((CoderFraming.stream.framers.first as? TLVFramerFactory)?.layout == .lengthPrefixed)
        #expect(CoderFraming(transport: .udp).framers.isEmpty)
    }
}
