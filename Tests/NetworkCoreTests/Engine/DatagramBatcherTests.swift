import NIOCore
import Testing

@testable import NetworkCore

/// `DatagramBatcher` on its own: which packets go together in one segmented send, and that
/// every packet comes out whole and in order.
@Suite("Engine.DatagramBatcher")
struct DatagramBatcherTests {
    /// Writes packets of these lengths (each filled with its index), at most `size` bytes each
    /// (nil: each its own length). `marks`, when given, are the packets' ECN codepoints.
    static func write(_ lengths: [Int], marks: [UInt8]? = nil, into batcher: inout DatagramBatcher, size: Int? = 1_400) {
        for (index, length) in lengths.enumerated() {
            let written = batcher.write(size: size ?? length) { base, ecn in
                for offset in 0..<length { base[offset] = UInt8(truncatingIfNeeded: index) }
                ecn = marks?[index] ?? 0
                return length
            }
            #expect(written == length)
        }
    }

    /// The packets of `batches`, as (length, the byte they are filled with).
    static func packets(_ batches: [DatagramBatch]) -> [[UInt8]] {
        batches.flatMap(\.packets).map { Array($0.readableBytesView) }
    }

    static func expected(_ lengths: [Int]) -> [[UInt8]] {
        lengths.enumerated().map { [UInt8](repeating: UInt8(truncatingIfNeeded: $0.offset), count: $0.element) }
    }

    @Test("without segmentation every packet is a batch of its own, whole and in order")
    func unsegmented() {
        var batcher = DatagramBatcher(segments: false)
        let lengths = [1_400, 1_400, 1_400, 80, 1_400]
        Self.write(lengths, into: &batcher)
        let batches = batcher.take()
        #expect(batches.count == 5)
        #expect(batches.allSatisfy { $0.segmentSize == nil })
        #expect(Self.packets(batches) == Self.expected(lengths))
        #expect(batcher.isEmpty)
    }

    @Test("packets of one size go together, a shorter one ends the batch, a longer one starts the next")
    func runsOfOneSize() {
        var batcher = DatagramBatcher(segments: true)
        // [4 × 1,400 + 200] [900] [1,200 + 1,200] (a longer packet after 900 starts anew)
        let lengths = [1_400, 1_400, 1_400, 1_400, 200, 900, 1_200, 1_200]
        Self.write(lengths, into: &batcher)
        let batches = batcher.take()
        #expect(batches.map(\.segmentSize) == [1_400, nil, 1_200])
        #expect(batches.map(\.bytes.readableBytes) == [5_800, 900, 2_400])
        #expect(Self.packets(batches) == Self.expected(lengths))
    }

    @Test("datagrams longer than maximumSegmentSize go alone: a 1,453-byte one between runs of 1,452")
    func longDatagramsGoAlone() {
        var batcher = DatagramBatcher(segments: true, maximumSegmentSize: 1_452, packetsPerStorage: 100)
        let lengths = [1_452, 1_452, 1_453, 1_452, 3_000, 1_200, 1_200, 1_200, 1_200]
        Self.write(lengths, into: &batcher, size: nil)
        let batches = batcher.take()
        #expect(batches.map(\.segmentSize) == [1_452, nil, nil, nil, 1_200])
        #expect(batches.map(\.bytes.readableBytes) == [2_904, 1_453, 1_452, 3_000, 4_800])
        #expect(Self.packets(batches) == Self.expected(lengths))
    }

    @Test("a storage holds packetsPerStorage packets of the first one's size, and a batch never spans two")
    func packetsPerStorage() {
        var batcher = DatagramBatcher(segments: true, packetsPerStorage: 3)
        let lengths = [Int](repeating: 1_200, count: 9)
        Self.write(lengths, into: &batcher, size: nil)
        let batches = batcher.take()
        #expect(batches.map(\.bytes.readableBytes) == [3_600, 3_600, 3_600])
        #expect(Self.packets(batches) == Self.expected(lengths))
    }

    @Test("a batch holds at most maximumSegments packets and 65,000 bytes; storage runs out and a new one starts")
    func bounds() {
        var batcher = DatagramBatcher(segments: true, maximumSegments: 10)
        let lengths = [Int](repeating: 1_000, count: 25)
        Self.write(lengths, into: &batcher)
        var batches = batcher.take()
        #expect(batches.map(\.bytes.readableBytes) == [10_000, 10_000, 5_000])
        #expect(Self.packets(batches) == Self.expected(lengths))

        var large = DatagramBatcher(segments: true)
        let big = [Int](repeating: 1_452, count: 100)
        Self.write(big, into: &large, size: 1_452)
        batches = large.take()
        #expect(batches.allSatisfy { $0.bytes.readableBytes <= DatagramRun.maximumBytes })
        #expect(batches.allSatisfy { $0.bytes.readableBytes / 1_452 <= 64 })
        // 32 packets per storage: batches never span two.
        #expect(batches.map(\.bytes.readableBytes).reduce(0, +) == 100 * 1_452)
        #expect(batches.count >= 3)
        #expect(Self.packets(batches) == Self.expected(big))
    }

    @Test("nothing written (0, or an error) adds no packet; take empties the batcher and the next packets start afresh")
    func nothingWritten() {
        var batcher = DatagramBatcher(segments: true)
        #expect(batcher.write(size: 1_400) { _, _ in 0 } == 0)
        #expect(batcher.write(size: 1_400) { _, _ in -240 } == -240)
        #expect(batcher.isEmpty)
        Self.write([1_400, 1_400], into: &batcher)
        let first = batcher.take()
        Self.write([1_400], into: &batcher)
        let second = batcher.takePackets()
        #expect(Self.packets(first) == Self.expected([1_400, 1_400]))
        // The first take's buffers are unchanged by later writes.
        #expect(second.map { Array($0.readableBytesView) } == Self.expected([1_400]))
        #expect(Self.packets(first) == Self.expected([1_400, 1_400]))
    }

    @Test("packets of another ECN codepoint start a new batch; each batch carries its packets' codepoint")
    func ecnSplitsBatches() {
        var batcher = DatagramBatcher(segments: true)
        let lengths = [1_400, 1_400, 1_400, 1_400, 1_400]
        Self.write(lengths, marks: [2, 2, 0, 0, 2], into: &batcher)
        let batches = batcher.take()
        #expect(batches.map(\.ecn) == [2, 0, 2])
        #expect(batches.map { $0.packets.count } == [2, 2, 1])
        #expect(Self.packets(batches) == Self.expected(lengths))
    }
}
