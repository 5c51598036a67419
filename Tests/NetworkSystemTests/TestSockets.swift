#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NetworkSystem

/// A socket made with socket(2) directly, closed on deinit.
final class TestSocket {
    let fd: Int32
    let family: SocketFamily
    let datagram: Bool

    init(_ family: SocketFamily, datagram: Bool) throws {
        let domain = family == .inet ? AF_INET : AF_INET6
        let type = Int32((datagram ? SOCK_DGRAM : SOCK_STREAM).rawValue)
        let fd = socket(domain, type, 0)
        guard fd >= 0 else { throw SystemError.last("socket") }
        self.fd = fd
        self.family = family
        self.datagram = datagram
    }

    deinit { close(fd) }

    func get(_ level: Int32, _ name: Int32) throws -> Int32 {
        try SocketOptions.get(fd: fd, level: level, name: name)
    }

    /// Binds to the loopback address of its family on an ephemeral port and returns the port.
    func bindLoopback() throws -> UInt16 {
        if family == .inet {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else { throw SystemError.last("bind") }
        } else {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_addr = in6addr_loopback
            let rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            guard rc == 0 else { throw SystemError.last("bind") }
        }
        return try localPort()
    }

    func localPort() throws -> UInt16 {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { throw SystemError.last("getsockname") }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// Connects to the loopback address of its family at `port`.
    func connectLoopback(port: UInt16) throws {
        let rc: Int32
        if family == .inet {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            a.sin6_addr = in6addr_loopback
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard rc == 0 else { throw SystemError.last("connect") }
    }
}

/// The contents of a settings file as the kernel answered it.
func sysctl(_ path: String) -> Int? { SysFS.readInt("/proc/sys/" + path) }
