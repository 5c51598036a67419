#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opening and binding a nonblocking UDP socket ourselves (rather than through NIO's
/// bootstrap), so that its descriptor is known: NIO never hands a channel's descriptor out, and a
/// QUIC connection writes its packets straight to the socket (see `DirectSocket+Datagrams`).
package enum DatagramSocketOpen {
    /// How much a socket opened here may hold unread: 2 MiB (the kernel doubles it for its
    /// bookkeeping and caps it at `net.core.rmem_max`). With the default (about 208 KiB, some 90
    /// full-size datagrams as the kernel counts them) a burst that arrives while the event loop is
    /// busy elsewhere overflows it: 200 QUIC datagrams a peer sent at once lost half on a loaded
    /// machine. Memory is taken only while datagrams wait.
    package static let receiveBufferBytes: Int32 = 2 << 20

    /// Opens a nonblocking, close-on-exec UDP socket of `family`, sets `SO_REUSEADDR` when asked
    /// (a QUIC listener's per-connection sockets share its port), a larger receive buffer
    /// (`receiveBufferBytes`; best effort) and `options` (those that must come before the bind,
    /// such as `SO_REUSEPORT` and `IPV6_V6ONLY`, among them), and binds it to `local`. The
    /// descriptor is closed on failure.
    package static func bound(
        family: Int32, local: UnsafeRawBufferPointer, reuseAddress: Bool, options: [SocketOptionSetting] = []
    ) throws(SystemError) -> Int32 {
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .last("socket") }
        var size = receiveBufferBytes
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        do throws(SystemError) {
            if reuseAddress {
                var on: Int32 = 1
                guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                    throw .last("setsockopt(SO_REUSEADDR)")
                }
            }
            for option in options {
                var value = option.value
                guard setsockopt(descriptor, option.level, option.name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                    throw .last("setsockopt(\(option.level), \(option.name))")
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
