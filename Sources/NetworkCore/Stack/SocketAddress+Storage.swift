#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

extension SocketAddress {
    /// The IPv4 or IPv6 address the kernel wrote into `storage` (`getsockname`), without a host
    /// name; nil for any other family.
    init?(storage: sockaddr_storage) {
        switch Int32(storage.ss_family) {
        case AF_INET:
            self.init(withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in.self) }, host: "")
        case AF_INET6:
            self.init(withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in6.self) }, host: "")
        default:
            return nil
        }
    }
}
