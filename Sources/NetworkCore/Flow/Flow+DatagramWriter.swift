import NIOCore
import NetworkSystem

/// Plain UDP datagrams straight to the socket (a connection's own, or the listener's or group's
/// a peer's connection shares): at a flush, the outbox's datagrams of one size go out as one
/// segmented `sendmsg` (UDP generic segmentation offload), each with its whole TOS byte (its ECN
/// codepoint beside the service class's DSCP, or its own class's). The kernel cuts a batch back
/// into the datagrams it was made of, so message boundaries are those of the sends. Once a
/// socket cannot segment (refused once, `DatagramWriter`), its datagrams go through NIO again.
extension Flow {
    /// The longest datagram that goes into a batch: the UDP payload of a 1,500-byte IPv6 packet.
    /// A segment longer than the path's packets fails its whole batch (the kernel fragments a
    /// single datagram, never a segment) and turns segmentation off for the socket, so longer
    /// datagrams go alone (and are fragmented where they must be, as before).
    static let largestSegmentedDatagram = 1_452

    /// Writes datagrams to `descriptor` (a duplicate of it) from now on, where the system can
    /// segment them; otherwise they stay with NIO, whose vector writes (`sendmmsg`) serve better
    /// than a `sendmsg` each.
    func attachDatagramWriter(descriptor: Int32) {
        let writer = DatagramWriter()
        // A datagram too large for the path, or without a route for now, fails its write and
        // leaves the connection up, as through NIO; an ICMP port unreachable is about an
        // earlier datagram, and the flow ignores it (`transportError`), as on Apple's.
        writer.toleratesRefusals = true
        writer.reportsLostDatagrams = true
        writer.writeDirectly(to: descriptor)
        guard writer.segments else { return writer.release() }
        // (Kept in the flow's `DatagramPath`, in its inbox: no field of its own.)
        mailbox.setDatagramWriter(writer)
    }

    /// Where this flush's datagrams can go in batches, when they can: the flow's own socket,
    /// or the listener's for a plain listener peer, with nothing between the flow and the
    /// socket. `owned`: the socket is the flow's, whose failure is the flow's too.
    func directDatagramRoute(
        for transport: FlowTransport
    ) -> (writer: DatagramWriter, remote: SocketAddress, channel: Channel, owned: Bool)? {
        switch transport {
        case .owned(let channel):
            guard transportKind == .udp, let datagramWriter = mailbox.datagramWriter, datagramWriter.segments,
                messageLayer == nil, !isFramed,
                let remote = channel.remoteAddress
            else { return nil }
            return (datagramWriter, remote, channel, true)
        case .shared(let peer):
            guard let writer = peer.plainWriter, writer.segments else { return nil }
            return (writer, peer.remote, peer.channel, false)
        default:
            return nil
        }
    }

    /// Writes the datagrams of `range` of `entries` through `writer` as batches, `promise`
    /// completing once all are written (with the first error of one that could not go). Each
    /// datagram leaves its entry and is sent from its own buffer, not copied into the batch.
    /// Returns the socket's error when it cannot go on.
    func writeDatagramsDirectly(
        _ entries: inout [DatagramOutbox.Entry], range: Range<Int>, through writer: DatagramWriter, to remote: SocketAddress,
        channel: Channel, promise: EventLoopPromise<Void>?
    ) -> FlowError? {
        var batches: [DatagramBatch] = []
        var run: DatagramRun?
        var first = ByteBuffer()
        var followers: [ByteBuffer] = []
        func close() {
            guard let shape = run else { return }
            batches.append(DatagramBatch(
                bytes: first, segmentSize: shape.sentSegmentSize, ecn: shape.ecn, dscp: shape.dscp, followers: followers))
            run = nil
            followers = []
        }
        // (Room up front: arrays grown by doubling allocate at every step.)
        batches.reserveCapacity(range.count / DirectSocket.maximumParts + 1)
        for index in range {
            guard let datagram = entries[index].datagram else { continue }
            entries[index].datagram = nil
            let (ecn, dscp, length) = (entries[index].ecn, entries[index].dscp, datagram.readableBytes)
            guard length > 0 else {
                // (An empty datagram is never a segment: it goes alone, in its turn.)
                close()
                batches.append(DatagramBatch(bytes: datagram, segmentSize: nil, ecn: ecn, dscp: dscp))
                continue
            }
            if run?.admit(length: length, ecn: ecn, dscp: dscp, maximumSegments: DirectSocket.maximumParts) == true {
                // (Room once a run has a second datagram: a run that stays single needs none.)
                if followers.isEmpty { followers.reserveCapacity(min(range.upperBound - index, DirectSocket.maximumParts - 1)) }
                followers.append(datagram)
                continue
            }
            close()
            run = DatagramRun(
                length: length, ecn: ecn, dscp: dscp, segments: true, maximumSegmentSize: Self.largestSegmentedDatagram)
            first = datagram
        }
        close()
        guard !batches.isEmpty else {
            promise?.succeed()
            return nil
        }
        return writer.write(batches, to: remote, through: ChannelDatagramOutbound(channel: channel), written: promise)
    }
}
