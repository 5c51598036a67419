#if canImport(Glibc)
import Glibc
#endif

/// Sends UDP datagrams to 127.0.0.1 from source addresses and ports of its choosing, as an
/// attacker who forges them does: a raw socket writing its own IPv4 and UDP headers (needs
/// CAP_NET_RAW, which the tests have as root). Loopback delivers them like any others.
final class SpoofedDatagramSender {
    private let fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { throw SocketError("socket(SOCK_RAW)") }
    }

    deinit { Glibc.close(fd) }

    /// One datagram with `payload` to 127.0.0.1:`port`, from `source` (host byte order)
    /// port `sourcePort`. The kernel fills in the IP checksum; the UDP checksum is left out
    /// (zero is allowed over IPv4).
    func send(to port: UInt16, from source: UInt32, sourcePort: UInt16, payload: [UInt8]) throws {
        let udpLength = 8 + payload.count
        let total = 20 + udpLength
        var packet = [UInt8](repeating: 0, count: total)
        packet[0] = 0x45  // IPv4, 20-byte header
        packet[2] = UInt8(total >> 8)
        packet[3] = UInt8(total & 0xFF)
        packet[8] = 64  // TTL
        packet[9] = UInt8(IPPROTO_UDP)
        for (index, byte) in Self.bytes(source).enumerated() { packet[12 + index] = byte }
        for (index, byte) in Self.bytes(0x7F00_0001).enumerated() { packet[16 + index] = byte }
        packet[20] = UInt8(sourcePort >> 8)
        packet[21] = UInt8(sourcePort & 0xFF)
        packet[22] = UInt8(port >> 8)
        packet[23] = UInt8(port & 0xFF)
        packet[24] = UInt8(udpLength >> 8)
        packet[25] = UInt8(udpLength & 0xFF)
        packet.replaceSubrange(28..., with: payload)
        var destination = RawSocket.address(port: port)
        let sent = packet.withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == total else { throw SocketError("sendto(SOCK_RAW)") }
    }

    private static func bytes(_ address: UInt32) -> [UInt8] {
        [UInt8(address >> 24), UInt8((address >> 16) & 0xFF), UInt8((address >> 8) & 0xFF), UInt8(address & 0xFF)]
    }
}
