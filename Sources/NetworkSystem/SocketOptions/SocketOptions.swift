#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Raw `setsockopt` / `getsockopt` with `Int32` values, and application of a plan.
package enum SocketOptions {
    /// `getsockopt(fd, level, name)` as an `Int32`.
    package static func get(fd: Int32, level: Int32, name: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, level, name, &value, &length) == 0 else {
            throw .last("getsockopt(\(level), \(name))")
        }
        return value
    }

    /// `setsockopt(fd, level, name, value)` with an `Int32`.
    package static func set(fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var v = value
        guard setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .last("setsockopt(\(level), \(name), \(value))")
        }
    }

    /// Performs each setting in order; stops at and throws the first failure.
    package static func apply(_ settings: [SocketOptionSetting], fd: Int32) throws(SystemError) {
        for s in settings {
            try set(fd: fd, level: s.level, name: s.name, value: s.value)
        }
    }

    /// Performs every setting, whatever fails, and returns the failures (e.g. `TCP_FASTOPEN_CONNECT`
    /// answers `EOPNOTSUPP` when `net.ipv4.tcp_fastopen` disables client TFO). For knobs that are
    /// hints, where a failure should not fail the connection.
    @discardableResult
    package static func applyBestEffort(_ settings: [SocketOptionSetting], fd: Int32) -> [(SocketOptionSetting, SystemError)] {
        var failures: [(SocketOptionSetting, SystemError)] = []
        for s in settings {
            do throws(SystemError) {
                try set(fd: fd, level: s.level, name: s.name, value: s.value)
            } catch {
                failures.append((s, error))
            }
        }
        return failures
    }

    /// `SO_BINDTOIFINDEX`: restricts the socket to one interface (needs no privilege when the
    /// socket is not yet bound to another device; `CAP_NET_RAW` to change it later).
    package static func bind(fd: Int32, toInterfaceIndex index: Int) throws(SystemError) {
        try set(fd: fd, level: SOL_SOCKET, name: LinuxConstants.SO_BINDTOIFINDEX, value: Int32(index))
    }

    /// `SO_BINDTODEVICE` by interface name.
    package static func bind(fd: Int32, toDevice name: String) throws(SystemError) {
        let rc = name.withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0))) }
        guard rc == 0 else { throw .last("setsockopt(SO_BINDTODEVICE, \(name))") }
    }
}
