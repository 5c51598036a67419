#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

extension FlowError {
    /// Maps whatever NIO or the system threw to one of the three error domains, so the user always
    /// sees a concrete errno rather than an opaque NIO error.
    package init(_ error: any Error) {
        switch error {
        case let flow as FlowError:
            self = flow
        case let proxy as ProxyError:
            self = proxy.flowError
        case let io as IOError:
            self = .posix(io.errnoCode)
        case let channel as ChannelError:
            switch channel {
            case .connectTimeout: self = .posix(ETIMEDOUT)
            case .ioOnClosedChannel, .alreadyClosed: self = .posix(ECANCELED)
            case .outputClosed: self = .posix(EPIPE)
            case .eof: self = .posix(ECONNRESET)
            case .inputClosed: self = .posix(ENOTCONN)
            case .writeMessageTooLarge: self = .posix(EMSGSIZE)
            case .unknownLocalAddress, .badMulticastGroupAddressFamily, .badInterfaceAddressFamily,
                .illegalMulticastAddress, .operationUnsupported, .inappropriateOperationForState:
                self = .posix(EINVAL)
            default: self = .posix(EIO)
            }
        case let connection as NIOConnectionError:
            if let first = connection.connectionErrors.first {
                self = FlowError(first.error)
            } else {
                self = .posix(ECONNREFUSED)
            }
        case is SocketAddressError:
            self = .posix(EINVAL)
        case is UnixDomainSocketPathWrongType:
            // Listening on a path where a file other than a socket exists: what bind(2) says.
            self = .posix(EADDRINUSE)
        default:
            self = .posix(EIO)
        }
    }
}
