#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing

@testable import NetworkCore

/// The framer host's output contract as a value.
@Suite("Core.FramerOutput")
struct FramerOutputTests {
    @Test func aHeaderThenTheMessageWithoutCopyComeOutInOrder() throws {
        var output = FramerOutput()
        output.begin(ByteBuffer(bytes: Array("payload".utf8)))
        output.write(ByteBuffer(bytes: [1, 0, 0, 0, 7]))
        try output.writeNoCopy(length: 7)
        let (written, dropped) = output.finish()
        #expect(written.flatMap { Array($0.readableBytesView) } == [1, 0, 0, 0, 7] + Array("payload".utf8))
        #expect(dropped == 0)
    }

    @Test func writingMoreThanTheMessageHasFailsAndLeftoversAreCounted() {
        var output = FramerOutput()
        output.begin(ByteBuffer(bytes: [1, 2, 3]))
        #expect(throws: FlowError.posix(EINVAL)) { try output.writeNoCopy(length: 4) }
        var first: UInt8?
        var complete = true
        let ran = output.parse(minimum: 1, maximum: 1, isComplete: true) { buffer, isComplete in
            first = buffer?.first
            complete = isComplete
            return 1
        }
        #expect(ran && first == 1 && !complete)
        #expect(!output.parse(minimum: 3, maximum: 3, isComplete: true) { _, _ in 0 })
        #expect(output.finish().dropped == 2)
    }

    @Test("over a byte stream, small writes of several messages gather into one buffer, in order")
    func smallWritesGatherAcrossMessages() throws {
        var output = FramerOutput(gathers: true)
        for (index, body) in ["one", "two"].enumerated() {
            output.begin(ByteBuffer(string: body))
            output.write(bytes: [UInt8(index), 3])
            try output.writeNoCopy(length: 3)
            let (written, dropped) = output.finish()
            #expect(written.isEmpty && dropped == 0, "nothing leaves before the flush")
        }
        #expect(output.gatheredBytes == 10)
        let taken = output.takeGathered()
        let gathered = try #require(taken)
        #expect(Array(gathered.readableBytesView) == [0, 3] + Array("one".utf8) + [1, 3] + Array("two".utf8))
        #expect(output.takeGathered() == nil && output.gatheredBytes == 0)
    }

    @Test("a piece over the copy limit is not copied: the run gathered before it leaves first, what follows gathers anew")
    func longPiecesEndTheGatheredRun() throws {
        var output = FramerOutput(gathers: true)
        let long = ByteBuffer(repeating: 7, count: FramerOutput.copyLimit + 1)
        output.begin(long)
        output.write(bytes: [9, 9])
        try output.writeNoCopy(length: long.readableBytes)
        output.write(bytes: [8])
        let (written, _) = output.finish()
        #expect(written.map(\.readableBytes) == [2, FramerOutput.copyLimit + 1])
        #expect(written[1].readableBytesView.allSatisfy { $0 == 7 })
        #expect(output.takeGathered().map { Array($0.readableBytesView) } == [8])
    }

    @Test("without gathering (datagrams, a framer below) every write is its own piece")
    func withoutGatheringPiecesStayApart() throws {
        var output = FramerOutput()
        output.begin(ByteBuffer(string: "ab"))
        output.write(bytes: [1])
        try output.writeNoCopy(length: 2)
        #expect(output.finish().written.map(\.readableBytes) == [1, 2])
        #expect(output.takeGathered() == nil)
    }
}
