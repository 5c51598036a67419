import NIOCore

/// Datagrams leaving one socket (a QUIC connection's packets, a UDP connection's datagrams at a
/// flush), written back to back into shared storage and grouped into batches the kernel segments
/// itself (UDP generic segmentation offload, `UDP_SEGMENT`): one `sendmsg` and one buffer for a
/// burst of same-size datagrams instead of one per datagram.
///
/// A batch is a run of packets of one size, possibly ended by one shorter packet, the shape
/// `UDP_SEGMENT` sends: the kernel cuts it every `segmentSize` bytes. Without segmentation
/// every packet is a batch of its own (still cut from the shared storage, so no allocation per
/// packet).
struct DatagramBatcher {
    /// A batch still being filled, by its place in `storage`.
    private struct Run {
        var start: Int
        var shape: DatagramRun
    }

    /// Whether packets of one size are put together for the kernel to segment: only where they
    /// reach the socket directly and the system has `UDP_SEGMENT`, and not once a segmented
    /// write failed on this path (`DatagramWriter`).
    var segments: Bool
    /// The most packets in one batch (the kernel's `UDP_MAX_SEGMENTS`: 64 since Linux 4.18).
    let maximumSegments: Int
    /// Longer packets go alone. QUIC's fit the path by construction; an application's may not,
    /// and a segment longer than the path's packets fails the whole batch (the kernel fragments
    /// a single datagram, never a segment), after which the socket sends one by one for good.
    let maximumSegmentSize: Int
    /// Packets per storage allocation (a batch never spans two).
    let packetsPerStorage: Int

    private let allocator = ByteBufferAllocator()
    /// Where packets are written; the runs below are its bytes. Sliced only once nothing more
    /// is written to it: a slice shares the storage, and a write would then copy it.
    private var storage: ByteBuffer?
    /// The batches in `storage`, in order; the last may still grow.
    private var runs: [Run] = []
    /// Batches of storage already given up.
    private var done: [DatagramBatch] = []

    init(segments: Bool = false, maximumSegments: Int = 64, maximumSegmentSize: Int = .max, packetsPerStorage: Int = 32) {
        self.segments = segments
        self.maximumSegments = max(1, maximumSegments)
        self.maximumSegmentSize = maximumSegmentSize
        self.packetsPerStorage = max(1, packetsPerStorage)
    }

    /// True when nothing waits to be taken.
    var isEmpty: Bool { done.isEmpty && runs.isEmpty }

    /// Writes one packet of at most `size` bytes with `body`, which returns the packet's length,
    /// or 0 or a negative error for none, and sets the packet's ECN codepoint; that result is
    /// returned. Packets of different codepoints or DSCPs (`dscp`: nil for the socket's) never share
    /// a batch.
    mutating func write(size: Int, dscp: UInt8? = nil, _ body: (UnsafeMutablePointer<UInt8>, inout UInt8) -> Int) -> Int {
        // Out of the property while written, so the buffer is not shared (no copy).
        var buffer: ByteBuffer
        if let current = storage, current.writableBytes >= size {
            buffer = current
            storage = nil
        } else {
            sealStorage()
            buffer = allocator.buffer(capacity: size * packetsPerStorage)
        }
        let start = buffer.writerIndex
        var written = 0
        var ecn: UInt8 = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { destination in
            guard let base = destination.baseAddress else { return 0 }
            written = body(base.assumingMemoryBound(to: UInt8.self), &ecn)
            return max(0, written)
        }
        storage = buffer
        if written > 0 { add(start: start, length: written, ecn: ecn, dscp: dscp) }
        return written
    }

    /// The batches made since the last call, in order.
    mutating func take() -> [DatagramBatch] {
        sealStorage()
        defer { done.removeAll(keepingCapacity: true) }
        return done
    }

    /// The packets made since the last call, one buffer each, in order.
    mutating func takePackets() -> [ByteBuffer] {
        take().flatMap(\.packets)
    }

    private mutating func add(start: Int, length: Int, ecn: UInt8, dscp: UInt8?) {
        if segments, !runs.isEmpty,
            runs[runs.count - 1].shape.admit(length: length, ecn: ecn, dscp: dscp, maximumSegments: maximumSegments)
        {
            return
        }
        runs.append(Run(
            start: start,
            shape: DatagramRun(length: length, ecn: ecn, dscp: dscp, segments: segments, maximumSegmentSize: maximumSegmentSize)))
    }

    /// Nothing more goes into the storage: its runs become batches, and the next packet starts
    /// a new one.
    private mutating func sealStorage() {
        defer {
            runs.removeAll(keepingCapacity: true)
            storage = nil
        }
        guard let storage else { return }
        for run in runs {
            // (In range: each run was written into this storage.)
            guard let bytes = storage.getSlice(at: run.start, length: run.shape.length) else { continue }
            done.append(DatagramBatch(bytes: bytes, segmentSize: run.shape.sentSegmentSize, ecn: run.shape.ecn, dscp: run.shape.dscp))
        }
    }
}
