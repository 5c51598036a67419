#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opening and binding a nonblocking UDP socket ourselves (rather than through NIO's
/// bootstrap), so that its descriptor is known: NIO never hands a channel's descriptor out, and a
/// QUIC connection writes its packets straight to the socket (see `DirectSocket+Datagrams`).
package enum DatagramSocketOpen {
    /// Opens a nonblocking, close-on-exec UDP socket of `family`, sets `SO_REUSEADDR` when asked
    /// (a QUIC listener's per-connection sockets share its port) and binds it to `local`. The
    /// descriptor is closed on failure.
    package static func bound(family: Int32, local: UnsafeRawBufferPointer, reuseAddress: Bool) throws(SystemError) -> Int32 {
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .last("socket") }
        do throws(SystemError) {
            if reuseAddress {
                var on: Int32 = 1
                guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                    throw .last("setsockopt(SO_REUSEADDR)")
                }
            }
            guard let address = local.baseAddress else { throw SystemError(errno: EINVAL, call: "bind") }
            guard bind(descriptor, address.assumingMemoryBound(to: sockaddr.self), socklen_t(local.count)) == 0 else {
                throw .last("bind")
            }
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }
}
