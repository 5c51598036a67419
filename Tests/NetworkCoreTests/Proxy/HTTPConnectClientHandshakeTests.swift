import NIOCore
import Testing

@testable import NetworkCore

/// The HTTP CONNECT state machine.
@Suite("Core.Proxy.HTTPConnectHandshake")
struct HTTPConnectClientHandshakeTests {
    private func request(_ machine: inout HTTPConnectClientHandshake) -> String? {
        guard case .write(let buffer) = machine.start() else { return nil }
        return String(buffer: buffer)
    }

    private func answer(_ text: String, credential: ProxyCredential? = nil) throws -> (ProxyHandshakeAction, ByteBuffer) {
        var machine = try HTTPConnectClientHandshake(authority: "example.com:443", credential: credential)
        _ = machine.start()
        var buffer = ByteBuffer(string: text)
        let action = machine.received(&buffer)
        return (action, buffer)
    }

    @Test("request line, Host and Basic credentials")
    func requestFormat() throws {
        var plain = try HTTPConnectClientHandshake(authority: "[2001:db8::1]:443", credential: nil)
        #expect(request(&plain) == "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n")
        var authed = try HTTPConnectClientHandshake(
            authority: "example.com:443", credential: ProxyCredential(username: "Aladdin", password: "open sesame"))
        #expect(request(&authed) == "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n"
            + "Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n")
        #expect(throws: ProxyError.self) {
            try HTTPConnectClientHandshake(authority: "a:1", credential: ProxyCredential(username: "a:b", password: ""))
        }
    }

    @Test("2xx opens the tunnel and keeps the bytes after the head")
    func success() throws {
        let (action, rest) = try answer("HTTP/1.0 200 Connection established\r\nProxy-agent: x\r\n\r\nSSH-2.0-early")
        #expect(action == .established)
        #expect(String(buffer: rest) == "SSH-2.0-early")
        #expect(try answer("HTTP/1.1 204 OK\n\n").0 == .established, "bare LF line ends are accepted")
        // No reason phrase (and no space before the line end): "\r\n" must still end the line.
        #expect(try answer("HTTP/1.1 200\r\n\r\nX") == (.established, ByteBuffer(string: "X")))
        #expect(try answer("HTTP/1.0 407\r\nProxy-Authenticate: Basic\r\n\r\n").0
            == .failed(.httpProxyAuthenticationRequired(credentialSent: false)))
        let (interim, after) = try answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nX")
        #expect(interim == .established)
        #expect(String(buffer: after) == "X")
    }

    @Test("a head split across reads, byte by byte")
    func trickle() throws {
        var machine = try HTTPConnectClientHandshake(authority: "example.com:443", credential: nil)
        _ = machine.start()
        var buffer = ByteBuffer()
        var last = ProxyHandshakeAction.waitForData
        for byte in "HTTP/1.1 200 OK\r\nA: b\r\n\r\nZ".utf8 {
            buffer.writeInteger(byte)
            last = machine.received(&buffer)
            if last != .waitForData { break }
        }
        #expect(last == .established)
        #expect(buffer.readableBytes == 0, "Z had not arrived when the head ended")
    }

    @Test("statuses become clear errors")
    func statuses() throws {
        #expect(try answer("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").0
            == .failed(.httpProxyAuthenticationRequired(credentialSent: false)))
        #expect(try answer("HTTP/1.1 407 Nope\r\n\r\n", credential: ProxyCredential(username: "u", password: "p")).0
            == .failed(.httpProxyAuthenticationRequired(credentialSent: true)))
        #expect(try answer("HTTP/1.1 403 Forbidden\r\n\r\n").0 == .failed(.httpStatus(403)))
        #expect(try answer("HTTP/1.0 502 Bad Gateway\r\n\r\n").0 == .failed(.httpStatus(502)))
        #expect(ProxyError.httpProxyAuthenticationRequired(credentialSent: false).flowError == .posix(13))
        #expect(ProxyError.httpStatus(403).flowError == .posix(13))
        #expect(ProxyError.httpStatus(502).flowError == .posix(111))
        #expect(ProxyError.httpStatus(503).flowError == .posix(111))
        #expect(ProxyError.httpStatus(504).flowError == .posix(110))
        #expect(ProxyError.httpStatus(400).flowError == .posix(71))
        #expect(try answer("HTTP/1.1 101 Switching\r\n\r\n").0 != .established)
    }

    @Test("garbage and oversized heads")
    func hostile() throws {
        #expect(try answer("SSH-2.0-OpenSSH\r\n\r\n").0 == .failed(.malformedResponse("not an HTTP/1.x status line")))
        #expect(try answer("HTTP/1.1 2000 OK\r\n\r\n").0 == .failed(.malformedResponse("bad status code")))
        #expect(try answer("HTTP/2 200\r\n\r\n").0 == .failed(.malformedResponse("not an HTTP/1.x status line")))
        let limit = HTTPConnectClientHandshake.maximumResponseHeadBytes
        let huge = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: limit / 30)
        #expect(try answer(huge).0 == .failed(.responseTooLarge(limit: limit)))
        #expect(try answer(huge + "\r\n").0 == .failed(.responseTooLarge(limit: limit)), "complete but too large")
        // Endless interim responses count against the same limit.
        let interims = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: limit / 20)
        #expect(try answer(interims).0 == .failed(.responseTooLarge(limit: limit)))
        #expect(ProxyError.responseTooLarge(limit: limit).flowError == .posix(90))
        #expect(ProxyError.malformedResponse("x").flowError == .posix(71))
    }
}
