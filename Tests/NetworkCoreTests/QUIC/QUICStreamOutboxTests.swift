import NIOCore
import Testing

@testable import NetworkCore

/// The per-stream send queue on its own: what ngtcp2 is offered, and that bytes stay until the
/// peer acknowledged them (ngtcp2 keeps pointers into them for retransmission).
@Suite("QUIC.StreamOutbox")
struct QUICStreamOutboxTests {
    static func unsent(_ outbox: QUICStreamOutbox, limit: Int = 16) -> (bytes: [UInt8], fin: Bool, pieces: Int) {
        outbox.withUnsent(limit: limit) { pieces, fin in
            (pieces.flatMap { Array($0) }, fin, pieces.count)
        }
    }

    @Test("unsent bytes are offered in order across chunks, with the end only once all of them are")
    func offersInOrder() {
        var outbox = QUICStreamOutbox()
        let appended1 = outbox.append(ByteBuffer(string: "abc"), fin: false)
        #expect(appended1)
        let appended2 = outbox.append(ByteBuffer(string: "defg"), fin: true)
        #expect(appended2)
        var offered = Self.unsent(outbox)
        #expect(offered.bytes == Array("abcdefg".utf8))
        #expect(offered.fin && offered.pieces == 2)
        // ngtcp2 took 5 bytes, not the end.
        outbox.taken(5, fin: false)
        offered = Self.unsent(outbox)
        #expect(offered.bytes == Array("fg".utf8) && offered.fin)
        #expect(outbox.hasUnsent)
        outbox.taken(2, fin: true)
        #expect(!outbox.hasUnsent && outbox.finSent)
        #expect(outbox.heldBytes == 7, "sent bytes stay until acknowledged")
    }

    @Test("a piece limit offers the first chunks and leaves the end for later")
    func pieceLimit() {
        var outbox = QUICStreamOutbox()
        for index in 0..<5 { _ = outbox.append(ByteBuffer(bytes: [UInt8(index)]), fin: index == 4) }
        let offered = Self.unsent(outbox, limit: 2)
        #expect(offered.bytes == [0, 1] && !offered.fin)
    }

    @Test("acknowledged chunks are let go; partly acknowledged ones stay")
    func acknowledgements() {
        var outbox = QUICStreamOutbox()
        _ = outbox.append(ByteBuffer(repeating: 1, count: 100), fin: false)
        _ = outbox.append(ByteBuffer(repeating: 2, count: 100), fin: false)
        outbox.taken(200, fin: false)
        outbox.acknowledged(offset: 0, length: 150)
        #expect(outbox.heldBytes == 50)
        #expect(outbox.ackedOffset == 150)
        // An acknowledgement past what was sent cannot release unsent bytes.
        _ = outbox.append(ByteBuffer(repeating: 3, count: 10), fin: false)
        outbox.acknowledged(offset: 150, length: 500)
        #expect(outbox.ackedOffset == 200 && outbox.heldBytes == 10)
        #expect(Self.unsent(outbox).bytes == [UInt8](repeating: 3, count: 10))
    }

    @Test("nothing is accepted after the end; an empty send after it is")
    func afterTheEnd() {
        var outbox = QUICStreamOutbox()
        let appended3 = outbox.append(ByteBuffer(string: "x"), fin: true)
        #expect(appended3)
        let appended4 = outbox.append(ByteBuffer(string: "y"), fin: false)
        #expect(!appended4)
        let appended5 = outbox.append(ByteBuffer(), fin: true)
        #expect(appended5)
        #expect(outbox.queuedEnd == 1)
    }

    @Test("a stream that only ends offers the end alone")
    func onlyTheEnd() {
        var outbox = QUICStreamOutbox()
        _ = outbox.append(ByteBuffer(), fin: true)
        let offered = Self.unsent(outbox)
        #expect(offered.bytes.isEmpty && offered.fin && offered.pieces == 0)
        outbox.taken(0, fin: true)
        #expect(outbox.finSent && !outbox.hasUnsent)
    }

    @Test("discarding (a reset) lets everything go")
    func discard() {
        var outbox = QUICStreamOutbox()
        _ = outbox.append(ByteBuffer(repeating: 9, count: 1_000), fin: false)
        outbox.taken(400, fin: false)
        outbox.discard()
        #expect(outbox.heldBytes == 0 && !outbox.hasUnsent)
    }
}
