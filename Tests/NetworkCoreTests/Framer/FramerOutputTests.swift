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
}
