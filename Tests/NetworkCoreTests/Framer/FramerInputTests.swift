#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing

@testable import NetworkCore

/// The framer host's input contract as a value: a type-and-length protocol (1-byte type,
/// 4-byte big-endian length) parsed the way Apple's sample framers parse it, fed its bytes all
/// at once, one at a time, and in every other split: the messages must come out the same.
@Suite("Core.FramerInput")
struct FramerInputTests {
    typealias Input = FramerInput<UInt8>

    /// The wire form of `messages` (type, payload).
    static func encode(_ messages: [(UInt8, [UInt8])]) -> [UInt8] {
        messages.flatMap { type, payload in
            [type] + withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
        }
    }

    /// A framer's `handleInput`, as the sample code writes it: parse a header, deliver the
    /// body without copying, repeat; returns how many bytes it needs next.
    static func handleInput(_ input: inout Input, into out: inout [(UInt8, [UInt8])]) throws -> Int {
        while true {
            var header: (UInt8, Int)?
            let parsed = input.parse(minimum: 5, maximum: 5) { buffer, _ in
                guard let buffer, buffer.count >= 5 else { return 0 }
                let length = buffer[1..<5].reduce(0) { $0 << 8 | Int($1) }
                header = (buffer[0], length)
                return 5
            }
            guard parsed, let (type, length) = header else { return 5 }
            let (delivery, whole) = try input.deliver(length: length, message: type, isComplete: true)
            if let delivery { out.append((delivery.message, Array(delivery.bytes.readableBytesView))) }
            if !whole { return 0 }
        }
    }

    /// Feeds `wire` in pieces of the given sizes (cycled) and collects the messages.
    static func run(_ wire: [UInt8], pieces: [Int]) throws -> [(UInt8, [UInt8])] {
        var input = Input(maximumMessageLength: 1 << 20)
        var out: [(UInt8, [UInt8])] = []
        var offset = 0
        var index = 0
        while offset < wire.count {
            let size = min(pieces[index % pieces.count], wire.count - offset)
            index += 1
            if let delivery = try input.append(ByteBuffer(bytes: wire[offset..<offset + size])) {
                out.append((delivery.message, Array(delivery.bytes.readableBytesView)))
            }
            offset += size
            while input.wantsFramer {
                let before = input.bufferedBytes
                input.framerNeeds(try handleInput(&input, into: &out))
                if input.bufferedBytes == before { break }
            }
        }
        #expect(input.heldBytes == 0, "everything delivered")
        return out
    }

    static let messages: [(UInt8, [UInt8])] = [
        (1, Array("hello".utf8)), (2, []), (3, [UInt8](repeating: 7, count: 300)), (4, Array("x".utf8)),
    ]

    @Test func byteAtATimeAndCoalescedGiveTheSameMessages() throws {
        let wire = Self.encode(Self.messages)
        for pieces in [[wire.count], [1], [2], [3, 7], [5], [6, 1, 300], [64]] {
            let out = try Self.run(wire, pieces: pieces)
            #expect(out.map(\.0) == Self.messages.map(\.0), "pieces \(pieces)")
            #expect(out.map(\.1) == Self.messages.map(\.1), "pieces \(pieces)")
        }
    }

    @Test func parseWaitsForItsMinimumAndShowsAtMostItsMaximum() {
        var input = Input(maximumMessageLength: 100)
        _ = try? input.append(ByteBuffer(bytes: [1, 2, 3]))
        #expect(!input.parse(minimum: 4, maximum: 10) { _, _ in 0 })
        var seen: [UInt8] = []
        var complete = true
        let ran = input.parse(minimum: 2, maximum: 2) { buffer, isComplete in
            seen = Array(buffer ?? UnsafeMutableRawBufferPointer(start: nil, count: 0))
            complete = isComplete
            return 1
        }
        #expect(ran && seen == [1, 2] && !complete)
        #expect(input.bufferedBytes == 2, "one byte consumed")
        // At the end of input the rest is shown whatever the minimum, marked complete.
        input.endOfInput()
        var shown = 0
        let ranAtEnd = input.parse(minimum: 10, maximum: 10) { buffer, isComplete in
            shown = buffer?.count ?? 0
            complete = isComplete
            return 2
        }
        #expect(ranAtEnd && shown == 2 && complete)
    }

    /// Parsing shows the buffered bytes in place (no copy of the rest of the read per message,
    /// which mutable access to storage that delivered slices share made before): a framer that
    /// unmasks a body in its parse step (XOR, as WebSocket does) delivers the unmasked bytes
    /// without copying them, and the messages delivered before keep their own bytes.
    @Test func aFramerWritingIntoWhatItIsShownChangesOnlyTheMessageItParses() throws {
        var input = Input(maximumMessageLength: 1 << 20)
        // Three messages in one read: 2-byte length, body XOR 0x5A.
        let bodies: [[UInt8]] = [[1, 2, 3], [4, 5, 6, 7], [8]]
        var wire: [UInt8] = []
        for body in bodies { wire += [0, UInt8(body.count)] + body.map { $0 ^ 0x5A } }
        _ = try input.append(ByteBuffer(bytes: wire))
        var delivered: [ByteBuffer] = []
        while input.bufferedBytes > 0 {
            var length = 0
            let parsed = input.parse(minimum: 2, maximum: Int.max) { buffer, _ in
                guard let buffer, buffer.count >= 2 else { return 0 }
                length = Int(buffer[0]) << 8 | Int(buffer[1])
                for index in 2..<2 + length { buffer[index] ^= 0x5A }
                return 2
            }
            #expect(parsed)
            let (delivery, whole) = try input.deliver(length: length, message: 0, isComplete: true)
            #expect(whole)
            delivered.append(try #require(delivery).bytes)
        }
        #expect(delivered.map { Array($0.readableBytesView) } == bodies)
    }

    @Test func aHugeAnnouncedLengthFailsAtOnceWithoutBuffering() throws {
        var input = Input(maximumMessageLength: 1 << 20)
        _ = try input.append(ByteBuffer(bytes: Self.encode([(9, [])]).prefix(1) + [0xFF, 0xFF, 0xFF, 0xFF]))
        var out: [(UInt8, [UInt8])] = []
        #expect(throws: FlowError.posix(EMSGSIZE)) { try Self.handleInput(&input, into: &out) }
        #expect(input.heldBytes == 0)
    }

    @Test func partsMarkedIncompleteAreJoinedAndBounded() throws {
        var input = Input(maximumMessageLength: 8)
        #expect(try input.deliver(ByteBuffer(bytes: [1, 2, 3]), message: 5, isComplete: false) == nil)
        let whole = try #require(try input.deliver(ByteBuffer(bytes: [4]), message: 6, isComplete: true))
        #expect(Array(whole.bytes.readableBytesView) == [1, 2, 3, 4])
        #expect(whole.message == 5, "a message keeps the metadata of its first part")
        _ = try input.deliver(ByteBuffer(bytes: [UInt8](repeating: 0, count: 6)), message: 1, isComplete: false)
        #expect(throws: FlowError.posix(EMSGSIZE)) {
            try input.deliver(ByteBuffer(bytes: [1, 2, 3]), message: 1, isComplete: true)
        }
    }
}
