#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opening a socket ourselves rather than through NIO's bootstrap, so that its descriptor is
/// known (NIO never hands a channel's descriptor out): the steps a TCP connect
/// (`StreamSocketConnect`) and a UDP flow's socket share.
package enum SocketOpening {
    /// Opens a nonblocking, close-on-exec socket of `family` and `type` (`SOCK_STREAM`,
    /// `SOCK_DGRAM`), applies `settings` (the first failure fails the open, as it would through
    /// NIO), tries `bestEffort` (failures ignored) and binds to `local` if given. The descriptor
    /// is closed on failure.
    package static func open(
        family: Int32, type: Int32, protocol: Int32, settings: [SocketOptionSetting], bestEffort: [SocketOptionSetting],
        local: UnsafeRawBufferPointer?
    ) throws(SystemError) -> Int32 {
        let descriptor = socket(family, type | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        guard descriptor >= 0 else { throw .last("socket") }
        do throws(SystemError) {
            try SocketOptions.apply(settings, fd: descriptor)
            SocketOptions.applyBestEffort(bestEffort, fd: descriptor)
            if let local, let address = local.baseAddress {
                guard bind(descriptor, address.assumingMemoryBound(to: sockaddr.self), socklen_t(local.count)) == 0 else {
                    throw .last("bind")
                }
            }
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }
}
