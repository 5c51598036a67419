#if canImport(Glibc)
import Glibc
#endif

/// A socket bound to 127.0.0.1 on a port the kernel picks (listening, for a stream socket), and
/// that port; nil when the kernel refuses.
public func loopbackSocket(stream: Bool) -> (descriptor: Int32, port: Int)? {
    let fd = socket(AF_INET, Int32(stream ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && (!stream || listen(fd, 16) == 0) && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else {
        close(fd)
        return nil
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
