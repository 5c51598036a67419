#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import NetworkSystem

/// `DirectSocket.sendDatagrams` on a real datagram socket pair (AF_UNIX: unlike loopback UDP,
/// its sender's buffer fills when the peer does not read, so the partial path is reachable).
@Suite("System.DirectSocketDatagrams")
struct DirectSocketDatagramTests {
    /// A connected pair of nonblocking datagram sockets.
    static func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
            throw SystemError.last("socketpair")
        }
        return (fds[0], fds[1])
    }

    /// Datagram `index` of a test: its number, then `size - 4` bytes of padding.
    static func datagram(_ index: Int, size: Int) -> [UInt8] {
        let value = UInt32(index)
        let head = [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        return head + [UInt8](repeating: UInt8(index & 0xff), count: size - 4)
    }

    /// Every datagram waiting on `fd`, in order.
    static func drain(_ fd: Int32) -> [[UInt8]] {
        var received: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count >= 0 else { return received }
            received.append(Array(buffer[0..<count]))
        }
    }

    /// Sends `datagrams` from index `start` on.
    static func send(_ socket: DirectSocket, _ datagrams: [[UInt8]], from start: Int) -> (sent: Int, failure: Int32?) {
        let rest = Array(datagrams[start...])
        let joined = rest.flatMap { $0 }
        return joined.withUnsafeBytes { socket.sendDatagrams($0, lengths: rest.map(\.count)) }
    }

    @Test("datagrams the socket does not take are left to the caller, in order; none is lost")
    func aFullBufferStopsTheBatchWithoutLoss() throws {
        let (sender, receiver) = try Self.pair()
        defer {
            close(sender)
            close(receiver)
        }
        let socket = try #require(DirectSocket(duplicating: sender))
        let datagrams = (0..<3000).map { Self.datagram($0, size: 4 + $0 % 300) }
        var received: [[UInt8]] = []
        var start = 0
        var partial = false
        while start < datagrams.count {
            let (sent, failure) = Self.send(socket, datagrams, from: start)
            #expect(failure == nil)
            if start + sent < datagrams.count { partial = true }
            start += sent
            received += Self.drain(receiver)
        }
        received += Self.drain(receiver)
        #expect(partial, "the peer's queue never filled")
        #expect(received == datagrams)
    }

    @Test("a failed socket answers its error and sends nothing")
    func aClosedPeerFailsTheBatch() throws {
        let (sender, receiver) = try Self.pair()
        defer { close(sender) }
        close(receiver)
        let socket = try #require(DirectSocket(duplicating: sender))
        let (sent, failure) = Self.send(socket, [[1], [2]], from: 0)
        #expect(sent == 0)
        #expect(failure != nil)
    }

    @Test("empty datagrams and an empty batch")
    func emptyDatagrams() throws {
        let (sender, receiver) = try Self.pair()
        defer {
            close(sender)
            close(receiver)
        }
        let socket = try #require(DirectSocket(duplicating: sender))
        #expect(Self.send(socket, [], from: 0) == (0, nil))
        let (sent, failure) = Self.send(socket, [[], [7], []], from: 0)
        #expect(sent == 3)
        #expect(failure == nil)
        #expect(Self.drain(receiver) == [[], [7], []])
    }
}
