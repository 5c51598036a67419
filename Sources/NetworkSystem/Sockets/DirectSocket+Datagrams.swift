#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `DirectSocket` on a UDP socket: a QUIC connection, or a multicast group, writes its
/// datagrams through it from the event loop, without NIO's per-write bookkeeping, several at once
/// when the kernel segments them (`UDP_SEGMENT`), with a whole TOS byte per datagram (NIO's
/// metadata carries the ECN bits alone, and the control message replaces the socket's DSCP), and
/// learns of a refused segmentation itself (through NIO such a failure would close the channel).
extension DirectSocket {
    /// `SOL_UDP`'s `UDP_SEGMENT` (linux/udp.h): the size to cut one send into datagrams at.
    private static let udpSegment: Int32 = 103

    /// Sends `bytes` as one datagram, or, with `segmentSize`, as datagrams of that size (the
    /// last may be shorter), without blocking, to `destination` (a `sockaddr`; nil on a connected
    /// socket). With `tos`, the datagrams leave with that whole TOS byte (DSCP and ECN): `IP_TOS`
    /// when `overIPv4` (an IPv4-mapped peer of an IPv6 socket too), else `IPV6_TCLASS`; without
    /// it, with the socket's own.
    package func sendDatagram(
        _ bytes: UnsafeRawBufferPointer, segmentSize: Int?, tos: UInt8? = nil, overIPv4: Bool = true,
        to destination: UnsafeRawBufferPointer? = nil
    ) -> Outcome {
        // (An empty datagram is a datagram too: sent with no data at all.)
        var vector = iovec(iov_base: bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }, iov_len: bytes.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
            sendVectors(UnsafeMutableBufferPointer(start: vector, count: bytes.isEmpty ? 0 : 1), total: bytes.count,
                        segmentSize: segmentSize, tos: tos, overIPv4: overIPv4, to: destination)
        }
    }

    /// As `sendDatagram(_:segmentSize:tos:overIPv4:to:)`, with the bytes gathered from `parts` in
    /// order (each a datagram of a batch, where they are: nothing is copied together first). The
    /// kernel cuts the whole every `segmentSize` bytes wherever the parts end. More than
    /// `maximumParts` parts fail with `EINVAL`, sending nothing.
    package func sendDatagram(
        parts: [UnsafeRawBufferPointer], segmentSize: Int?, tos: UInt8? = nil, overIPv4: Bool = true,
        to destination: UnsafeRawBufferPointer? = nil
    ) -> Outcome {
        guard parts.count <= Self.maximumParts else { return .failed(EINVAL) }
        return Self.withVectors(parts) { vectors, total in
            sendVectors(vectors, total: total, segmentSize: segmentSize, tos: tos, overIPv4: overIPv4, to: destination)
        }
    }

    /// The most parts one gathered send takes (the kernel's `UIO_MAXIOV` is 1,024; a batch has
    /// at most 64 datagrams).
    package static let maximumParts = 64

    private func sendVectors(
        _ vectors: UnsafeMutableBufferPointer<iovec>, total: Int, segmentSize: Int?, tos: UInt8?, overIPv4: Bool,
        to destination: UnsafeRawBufferPointer?
    ) -> Outcome {
        var message = msghdr()
        if let destination, let address = destination.baseAddress {
            message.msg_name = UnsafeMutableRawPointer(mutating: address)
            message.msg_namelen = socklen_t(destination.count)
        }
        // Room for two cmsgs of at most 8 bytes of data each (aligned as the kernel's CMSG_SPACE).
        let space = MemoryLayout<cmsghdr>.stride + MemoryLayout<UInt64>.stride
        let controlSpace = 2 * space
        return withUnsafeTemporaryAllocation(byteCount: controlSpace, alignment: MemoryLayout<cmsghdr>.alignment) { control in
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = vectors.count
            if let controlBase = control.baseAddress, segmentSize != nil || tos != nil {
                control.initializeMemory(as: UInt8.self, repeating: 0)
                var used = 0
                if let segmentSize {
                    let header = (controlBase + used).assumingMemoryBound(to: cmsghdr.self)
                    header.pointee.cmsg_level = Int32(IPPROTO_UDP)
                    header.pointee.cmsg_type = Self.udpSegment
                    header.pointee.cmsg_len = MemoryLayout<cmsghdr>.stride + MemoryLayout<UInt16>.size
                    (controlBase + used + MemoryLayout<cmsghdr>.stride).storeBytes(of: UInt16(clamping: segmentSize), as: UInt16.self)
                    used += space
                }
                if let tos {
                    let header = (controlBase + used).assumingMemoryBound(to: cmsghdr.self)
                    header.pointee.cmsg_level = overIPv4 ? Int32(IPPROTO_IP) : Int32(IPPROTO_IPV6)
                    header.pointee.cmsg_type = overIPv4 ? Int32(IP_TOS) : Int32(IPV6_TCLASS)
                    header.pointee.cmsg_len = MemoryLayout<cmsghdr>.stride + MemoryLayout<Int32>.size
                    (controlBase + used + MemoryLayout<cmsghdr>.stride).storeBytes(of: Int32(tos), as: Int32.self)
                    used += space
                }
                message.msg_control = controlBase
                message.msg_controllen = used
            }
            // (A datagram goes whole or not at all: what was sent is all of it.)
            let outcome = Self.outcome { sendmsg(descriptor, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if case .wrote = outcome { return .wrote(total) }
            return outcome
        }
    }

    /// The TOS byte the socket gives its datagrams of one family (`IP_TOS` for IPv4, an
    /// IPv4-mapped peer of an IPv6 socket too, else `IPV6_TCLASS`): what the parameters' service
    /// class set, or 0.
    package func trafficClassByte(overIPv4: Bool) -> UInt8 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let level = overIPv4 ? Int32(IPPROTO_IP) : Int32(IPPROTO_IPV6)
        let name = overIPv4 ? Int32(IP_TOS) : Int32(IPV6_TCLASS)
        guard getsockopt(descriptor, level, name, &value, &length) == 0, value >= 0 else { return 0 }
        return UInt8(truncatingIfNeeded: value)
    }
}
