#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A failed system call in a raw peer.
struct SocketError: Error, CustomStringConvertible {
    let call: String
    let code: Int32

    init(_ call: String, _ code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// An IPv4 socket made with socket(2) directly: an independent peer for the engine, written
/// without NIO or the engine's own helpers. Every blocking call has a timeout.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    let isDatagram: Bool
    private let closed = Atomic<Bool>(false)

    /// What one `receive` saw.
    enum ReceiveResult: Equatable, CustomStringConvertible {
        case data([UInt8])
        case endOfStream
        case error(Int32)
        case timedOut

        var description: String {
            switch self {
            case .data(let bytes): return "data(\(bytes.count) bytes)"
            case .endOfStream: return "endOfStream"
            case .error(let code): return "error(\(String(cString: strerror(code))), errno \(code))"
            case .timedOut: return "timedOut"
            }
        }
    }

    /// A new TCP (or, with `datagram`, UDP) socket.
    init(datagram: Bool = false) throws {
        let type = Int32(datagram ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue)
        let fd = socket(AF_INET, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        self.fd = fd
        self.isDatagram = datagram
    }

    private init(accepted fd: Int32) {
        self.fd = fd
        self.isDatagram = false
    }

    deinit { close() }

    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { _ = Glibc.close(fd) }
    }

    // MARK: Options

    func setOption(_ level: Int32, _ name: Int32, _ value: Int32) throws {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError("setsockopt(\(level), \(name))")
        }
    }

    func option(_ level: Int32, _ name: Int32) throws -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, level, name, &value, &length) == 0 else { throw SocketError("getsockopt(\(level), \(name))") }
        return value
    }

    func setNoDelay() throws { try setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1) }

    // MARK: Addresses

    static func address(port: UInt16, anyAddress: Bool = false) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = (anyAddress ? UInt32(0) : UInt32(0x7f00_0001)).bigEndian
        return address
    }

    /// Binds to 127.0.0.1 (or 0.0.0.0 with `anyAddress`) at `port` (0: ephemeral).
    func bind(port: UInt16 = 0, anyAddress: Bool = false, reuseAddress: Bool = false) throws {
        if reuseAddress { try setOption(SOL_SOCKET, SO_REUSEADDR, 1) }
        var address = Self.address(port: port, anyAddress: anyAddress)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw SocketError("bind(\(port))") }
    }

    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    var remotePort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    // MARK: TCP

    /// A listening TCP socket on 127.0.0.1 with an ephemeral port.
    static func tcpServer(backlog: Int32 = 64) throws -> RawSocket {
        let socket = try RawSocket()
        try socket.bind()
        try socket.listen(backlog: backlog)
        return socket
    }

    func listen(backlog: Int32 = 64) throws {
        guard Glibc.listen(fd, backlog) == 0 else { throw SocketError("listen") }
    }

    /// Waits until the socket is readable (or has an error/hang-up); false on timeout.
    func waitReadable(timeout: Double) -> Bool {
        poll(events: Int16(POLLIN), timeout: timeout)
    }

    func waitWritable(timeout: Double) -> Bool {
        poll(events: Int16(POLLOUT), timeout: timeout)
    }

    private func poll(events: Int16, timeout: Double) -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = max(0, Int32(deadline.timeIntervalSinceNow * 1000))
            let rc = Glibc.poll(&descriptor, 1, remaining)
            if rc > 0 { return true }
            if rc == 0 { return false }
            if errno != EINTR { return true }
        }
    }

    func accept(timeout: Double = 10) throws -> RawSocket {
        guard waitReadable(timeout: timeout) else { throw SocketError("accept (timed out)", ETIMEDOUT) }
        let child = Glibc.accept(fd, nil, nil)
        guard child >= 0 else { throw SocketError("accept") }
        _ = fcntl(child, F_SETFD, FD_CLOEXEC)
        return RawSocket(accepted: child)
    }

    /// Connects to 127.0.0.1:`port` (blocking).
    func connect(port: UInt16) throws {
        var address = Self.address(port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw SocketError("connect(\(port))") }
    }

    /// Starts a connect to 127.0.0.1:`port` without waiting for it; the socket stays non-blocking.
    func connectNonBlocking(port: UInt16) throws {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var address = Self.address(port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 || errno == EINPROGRESS else { throw SocketError("connect(\(port))") }
    }

    /// Writes all of `bytes`, waiting for room as needed.
    func sendAll(_ bytes: [UInt8], timeout: Double = 10) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                guard waitWritable(timeout: timeout) else { throw SocketError("send (timed out)", ETIMEDOUT) }
            } else {
                throw SocketError("send")
            }
        }
    }

    /// One `recv` of at most `maximum` bytes, waiting at most `timeout` for something to arrive.
    func receive(maximum: Int = 65_536, timeout: Double = 10) -> ReceiveResult {
        guard waitReadable(timeout: timeout) else { return .timedOut }
        var buffer = [UInt8](repeating: 0, count: maximum)
        let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, maximum, Int32(MSG_DONTWAIT)) }
        if n > 0 { return .data(Array(buffer[0..<n])) }
        if n == 0 { return isDatagram ? .data([]) : .endOfStream }
        if errno == EAGAIN || errno == EWOULDBLOCK { return .timedOut }
        return .error(errno)
    }

    /// Reads exactly `count` bytes.
    func receiveExactly(_ count: Int, timeout: Double = 10) throws -> [UInt8] {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while out.count < count {
            switch receive(maximum: count - out.count, timeout: max(0, deadline.timeIntervalSinceNow)) {
            case .data(let bytes): out += bytes
            case .endOfStream: throw SocketError("recv (end of stream after \(out.count) of \(count) bytes)", 0)
            case .error(let code): throw SocketError("recv", code)
            case .timedOut: throw SocketError("recv (timed out after \(out.count) of \(count) bytes)", ETIMEDOUT)
            }
        }
        return out
    }

    /// Reads until end of stream; what ended the read is returned with the bytes.
    func receiveUntilEnd(timeout: Double = 10) -> (bytes: [UInt8], end: ReceiveResult) {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let result = receive(timeout: max(0, deadline.timeIntervalSinceNow))
            if case .data(let bytes) = result { out += bytes } else { return (out, result) }
        }
    }

    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes with SO_LINGER {on, 0}: the kernel sends a reset instead of a FIN.
    func resetAndClose() {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    // MARK: UDP

    /// A UDP socket bound to 127.0.0.1 with an ephemeral port.
    static func udpPeer() throws -> RawSocket {
        let socket = try RawSocket(datagram: true)
        try socket.bind()
        return socket
    }

    func send(to port: UInt16, _ bytes: [UInt8]) throws {
        var address = Self.address(port: port)
        let n = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { raw in
                    sendto(fd, raw.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard n == bytes.count else { throw SocketError("sendto(\(port))") }
    }

    /// One datagram and the port it came from; nil on timeout.
    func receiveFrom(maximum: Int = 65_536, timeout: Double = 10) throws -> (bytes: [UInt8], port: UInt16)? {
        guard waitReadable(timeout: timeout) else { return nil }
        var buffer = [UInt8](repeating: 0, count: maximum)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                buffer.withUnsafeMutableBytes { Glibc.recvfrom(fd, $0.baseAddress, maximum, Int32(MSG_DONTWAIT), sa, &length) }
            }
        }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SocketError("recvfrom")
        }
        return (Array(buffer[0..<n]), UInt16(bigEndian: address.sin_port))
    }
}

/// A TCP or UDP port on 127.0.0.1 that was free a moment ago (bound, read, released).
func freePort(datagram: Bool = false) throws -> UInt16 {
    let socket = try RawSocket(datagram: datagram)
    try socket.bind()
    let port = socket.localPort
    socket.close()
    return port
}
