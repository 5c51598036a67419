import NIOCore
import NetworkSystem

extension DatagramSocketOpen {
    /// A nonblocking UDP socket bound to `local` (`bound(family:local:reuseAddress:options:)` for
    /// a NIO address), for `DatagramBootstrap.withBoundSocket`; the system's refusal as a POSIX
    /// error.
    static func bound(to local: SocketAddress, reuseAddress: Bool, options: [SocketOptionSetting] = []) throws(FlowError) -> Int32 {
        do {
            return try local.withSockAddr { address, length in
                try bound(
                    family: Int32(address.pointee.sa_family), local: UnsafeRawBufferPointer(start: address, count: length),
                    reuseAddress: reuseAddress, options: options)
            }
        } catch let error as SystemError {
            throw .posix(error.errno)
        } catch {
            throw FlowError(error)
        }
    }
}
