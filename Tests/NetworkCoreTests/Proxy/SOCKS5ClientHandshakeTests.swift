import NIOCore
import Testing

@testable import NetworkCore

/// The SOCKS5 state machine, byte by byte against RFC 1928/1929.
@Suite("Core.Proxy.SOCKS5Handshake")
struct SOCKS5ClientHandshakeTests {
    private func written(_ action: ProxyHandshakeAction) -> [UInt8]? {
        guard case .write(let buffer) = action else { return nil }
        return Array(buffer.readableBytesView)
    }

    private func feed(_ machine: inout SOCKS5ClientHandshake, _ bytes: [UInt8], into buffer: inout ByteBuffer)
        -> ProxyHandshakeAction
    {
        buffer.writeBytes(bytes)
        return machine.received(&buffer)
    }

    @Test("no authentication, domain target, leftover bytes stay for the tunnel")
    func noAuthentication() throws {
        var machine = try SOCKS5ClientHandshake(destination: .domain("example.com"), port: 443, credential: nil)
        #expect(written(machine.start()) == [5, 1, 0])
        var buffer = ByteBuffer()
        let request = written(feed(&machine, [5, 0], into: &buffer))
        #expect(request == [5, 1, 0, 3, 11] + Array("example.com".utf8) + [0x01, 0xBB])
        // The reply arrives in pieces, then tunnel data follows in the same read.
        #expect(feed(&machine, [5, 0, 0], into: &buffer) == .waitForData)
        #expect(feed(&machine, [1, 127, 0], into: &buffer) == .waitForData)
        #expect(feed(&machine, [0, 1, 0x1F, 0x90] + Array("hello".utf8), into: &buffer) == .established)
        #expect(buffer.readableBytesView.elementsEqual("hello".utf8))
    }

    @Test("user/password: offered with none, sent when chosen, rejection is EACCES")
    func usernamePassword() throws {
        let credential = ProxyCredential(username: "alice", password: "pw")
        var machine = try SOCKS5ClientHandshake(destination: .ipv4([192, 0, 2, 1]), port: 80, credential: credential)
        #expect(written(machine.start()) == [5, 2, 0, 2])
        var buffer = ByteBuffer()
        #expect(written(feed(&machine, [5, 2], into: &buffer)) == [1, 5] + Array("alice".utf8) + [2] + Array("pw".utf8))
        #expect(written(feed(&machine, [1, 0], into: &buffer)) == [5, 1, 0, 1, 192, 0, 2, 1, 0, 80])
        #expect(feed(&machine, [5, 0, 0, 4] + [UInt8](repeating: 0, count: 18), into: &buffer) == .established)
        #expect(buffer.readableBytes == 0)

        var rejected = try SOCKS5ClientHandshake(destination: .ipv4([192, 0, 2, 1]), port: 80, credential: credential)
        _ = rejected.start()
        var other = ByteBuffer()
        _ = feed(&rejected, [5, 2], into: &other)
        let action = feed(&rejected, [1, 1], into: &other)
        #expect(action == .failed(.socksAuthenticationFailed(status: 1)))
        #expect(ProxyError.socksAuthenticationFailed(status: 1).flowError == .posix(13))
    }

    @Test("refusals and violations")
    func failures() throws {
        func run(_ replies: [[UInt8]], credential: ProxyCredential? = nil) throws -> ProxyHandshakeAction {
            var machine = try SOCKS5ClientHandshake(destination: .ipv6([UInt8](repeating: 0, count: 15) + [1]), port: 1, credential: credential)
            _ = machine.start()
            var buffer = ByteBuffer()
            var action = ProxyHandshakeAction.waitForData
            for reply in replies { action = feed(&machine, reply, into: &buffer) }
            return action
        }
        #expect(try run([[5, 0xFF]]) == .failed(.socksNoAcceptableMethod))
        #expect(try run([[5, 2]]) == .failed(.malformedResponse("SOCKS5 proxy chose method 2, which was not offered")))
        #expect(try run([[4, 0]]) == .failed(.malformedResponse("SOCKS version 4 in the method choice")))
        #expect(try run([[5, 0], [5, 5]]) == .failed(.socksReply(.connectionRefused)), "refusal known from two bytes")
        #expect(try run([[5, 0], [5, 0, 0, 9]]) == .failed(.malformedResponse("address type 9 in the reply")))
        #expect(ProxyError.socksReply(.connectionRefused).flowError == .posix(111))
        #expect(ProxyError.socksReply(.hostUnreachable).flowError == .posix(113))
        #expect(ProxyError.socksReply(.networkUnreachable).flowError == .posix(101))
        #expect(ProxyError.socksReply(.notAllowedByRuleset).flowError == .posix(13))
        #expect(ProxyError.socksReply(.generalFailure).flowError == .posix(5))
        #expect(ProxyError.socksReply(SOCKS5ReplyCode(rawValue: 0x42)).flowError == .posix(5))
    }

    @Test("what RFC 1928/1929 cannot carry is refused before anything is sent")
    func limits() {
        #expect(throws: ProxyError.self) {
            try SOCKS5ClientHandshake(destination: .domain(String(repeating: "a", count: 256)), port: 1, credential: nil)
        }
        #expect(throws: ProxyError.self) {
            try SOCKS5ClientHandshake(
                destination: .domain("x"), port: 1,
                credential: ProxyCredential(username: String(repeating: "u", count: 256), password: ""))
        }
        #expect(throws: ProxyError.self) {
            try SOCKS5ClientHandshake(destination: .domain("x"), port: 1, credential: ProxyCredential(username: "", password: "p"))
        }
    }
}
