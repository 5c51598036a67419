#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A socket on a free port of 127.0.0.1 that is never read: a server that never answers. Over
/// TCP it listens, so connections complete and then hear nothing; over UDP datagrams vanish
/// (no port-unreachable error, as a closed port would give). The test closes it when done.
struct SilentLoopbackSocket {
    /// The port it is bound to.
    let port: Int
    private let fd: Int32

    /// Binds (and for TCP, listens) on an ephemeral port of 127.0.0.1.
    init(udp: Bool) throws {
        let fd = socket(AF_INET, Int32((udp ? SOCK_DGRAM : SOCK_STREAM).rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (udp || listen(fd, 4) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            Glibc.close(fd)
            throw SilentLoopbackSocketError()
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Closes the socket (an explicit call, so it stays open for as long as the test needs).
    func close() {
        Glibc.close(fd)
    }
}

/// The socket could not be bound or made to listen.
struct SilentLoopbackSocketError: Error {}
