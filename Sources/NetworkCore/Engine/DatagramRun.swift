/// The shape of one segmented send being put together: datagrams of one size, possibly ended by
/// one shorter, of one ECN codepoint and DSCP, within the kernel's limits on segments and bytes.
/// `DatagramBatcher` (packets written back to back) and a UDP flow's flush (datagrams left where
/// they are) grow their batches by it.
struct DatagramRun {
    /// The length of every datagram but a shorter last one.
    private(set) var segmentSize: Int
    private(set) var count = 1
    /// Bytes in the run.
    private(set) var length: Int
    /// A shorter datagram ended it, or it cannot grow at all.
    private(set) var closed: Bool
    let ecn: UInt8
    /// nil for the socket's own.
    let dscp: UInt8?

    /// The most bytes in one batch: one UDP datagram's payload at most, as the kernel requires.
    static let maximumBytes = 65_000

    /// A run of one datagram of `length` bytes. It takes no more when segmentation is off
    /// (`segments`) or the datagram is longer than `maximumSegmentSize` (it goes alone).
    init(length: Int, ecn: UInt8, dscp: UInt8?, segments: Bool, maximumSegmentSize: Int) {
        segmentSize = length
        self.length = length
        closed = !segments || length > maximumSegmentSize
        self.ecn = ecn
        self.dscp = dscp
    }

    /// Adds a datagram of `length` bytes when it fits the run (at most `maximumSegments` in all);
    /// false, changing nothing, when it must start a run of its own.
    mutating func admit(length: Int, ecn: UInt8, dscp: UInt8?, maximumSegments: Int) -> Bool {
        guard !closed, count < maximumSegments, ecn == self.ecn, dscp == self.dscp, length <= segmentSize,
            self.length + length <= Self.maximumBytes
        else { return false }
        self.length += length
        count += 1
        closed = length < segmentSize
        return true
    }

    /// The segment size to send the run with: nil for a single datagram.
    var sentSegmentSize: Int? { count > 1 ? segmentSize : nil }
}
