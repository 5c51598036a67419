import NIOCore

/// Datagrams to send with one write: one datagram, or a run of datagrams of one size (possibly
/// ended by one shorter) that the kernel cuts every `segmentSize` bytes (UDP generic
/// segmentation offload, `UDP_SEGMENT`). Made by `DatagramBatcher` for a QUIC connection's
/// packets, by a multicast group for its sends and by a UDP flow's flush; written by
/// `DatagramWriter`.
struct DatagramBatch {
    /// The batch's bytes; with `followers`, its first datagram alone.
    var bytes: ByteBuffer
    /// The length of every datagram but the last (which may be shorter); nil for one datagram.
    var segmentSize: Int?
    /// The ECN codepoint its datagrams leave with (0: not ECN-capable).
    var ecn: UInt8 = 0
    /// The DSCP its datagrams leave with; nil for the socket's own (the parameters' service class).
    var dscp: UInt8?
    /// The datagrams after the first when each is in a buffer of its own (a UDP flow's sends,
    /// sent from where they are instead of copied together): each is one more segment.
    var followers: [ByteBuffer] = []

    /// Calls `body` with each datagram of the batch, in order (slices: no copy).
    func forEachPacket(_ body: (ByteBuffer) -> Void) {
        guard followers.isEmpty else {
            body(bytes)
            return followers.forEach(body)
        }
        guard let segmentSize, segmentSize > 0 else { return body(bytes) }
        var rest = bytes
        while rest.readableBytes > 0, let packet = rest.readSlice(length: min(segmentSize, rest.readableBytes)) {
            body(packet)
        }
    }

    /// The datagrams of the batch, one buffer each.
    var packets: [ByteBuffer] {
        var out: [ByteBuffer] = []
        forEachPacket { out.append($0) }
        return out
    }

    /// The batch's datagrams as batches of one each, with its markings.
    var singles: [DatagramBatch] {
        packets.map { DatagramBatch(bytes: $0, segmentSize: nil, ecn: ecn, dscp: dscp) }
    }
}
