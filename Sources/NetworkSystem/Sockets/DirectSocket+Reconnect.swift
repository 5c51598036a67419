#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Moving a connected UDP socket to the source address the routing table now gives its peer,
/// for a QUIC client whose path changed (connection migration, RFC 9000 §9).
extension DirectSocket {
    /// Dissolves the socket's association (`connect` with `AF_UNSPEC`), so the kernel forgets
    /// the source address it chose (and the port, which was never asked for: the socket is bound
    /// to the wildcard with port 0), then connects it to `remote` again, which looks the route up
    /// afresh. Returns the socket's new local address (`getsockname`). A socket bound to a
    /// particular address keeps it.
    package func reconnect(to remote: UnsafeRawBufferPointer) throws(SystemError) -> sockaddr_storage {
        guard let target = remote.baseAddress else { throw SystemError(errno: EINVAL, call: "connect") }
        var unspecified = sockaddr()
        unspecified.sa_family = sa_family_t(AF_UNSPEC)
        guard connect(descriptor, &unspecified, socklen_t(MemoryLayout<sockaddr>.size)) == 0 else { throw .last("connect(AF_UNSPEC)") }
        guard connect(descriptor, target.assumingMemoryBound(to: sockaddr.self), socklen_t(remote.count)) == 0 else {
            throw .last("connect")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard named else { throw .last("getsockname") }
        return storage
    }
}
