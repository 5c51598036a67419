#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Opening and connecting a nonblocking stream socket ourselves (rather than through NIO's
/// bootstrap), so that its descriptor is known: NIO never hands a channel's descriptor out, and a
/// flow that writes from the sender's thread needs it (see `DirectSocket`).
package enum StreamSocketConnect {
    /// A socket whose connect is under way (or done, `inProgress` false).
    package struct Started: Sendable {
        package var descriptor: Int32
        package var inProgress: Bool
    }

    /// Opens a nonblocking, close-on-exec stream socket of `family` (`protocol` 0 for TCP, or
    /// `IPPROTO_MPTCP`), applies `settings` (the first failure fails the connect, as it would
    /// through NIO), tries `bestEffort` (failures ignored), binds to `local` if given and starts
    /// connecting to `remote`. The descriptor is closed on failure.
    package static func start(
        family: Int32, protocol: Int32, settings: [SocketOptionSetting], bestEffort: [SocketOptionSetting],
        local: UnsafeRawBufferPointer?, remote: UnsafeRawBufferPointer
    ) throws(SystemError) -> Started {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        guard descriptor >= 0 else { throw .last("socket") }
        do throws(SystemError) {
            try SocketOptions.apply(settings, fd: descriptor)
            SocketOptions.applyBestEffort(bestEffort, fd: descriptor)
            if let local, let address = local.baseAddress {
                guard bind(descriptor, address.assumingMemoryBound(to: sockaddr.self), socklen_t(local.count)) == 0 else {
                    throw .last("bind")
                }
            }
            guard let address = remote.baseAddress else { throw SystemError(errno: EINVAL, call: "connect") }
            while true {
                if connect(descriptor, address.assumingMemoryBound(to: sockaddr.self), socklen_t(remote.count)) == 0 {
                    return Started(descriptor: descriptor, inProgress: false)
                }
                switch errno {
                case EINTR: continue
                case EINPROGRESS: return Started(descriptor: descriptor, inProgress: true)
                default: throw .last("connect")
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// The outcome of a finished nonblocking connect (`SO_ERROR`): 0 when connected, else errno.
    package static func outcome(descriptor: Int32) -> Int32 {
        do throws(SystemError) {
            return try SocketOptions.get(fd: descriptor, level: SOL_SOCKET, name: SO_ERROR)
        } catch {
            return error.errno
        }
    }
}
