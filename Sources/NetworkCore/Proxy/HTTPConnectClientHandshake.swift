import NIOCore

/// The client side of an HTTP/1.1 CONNECT tunnel (RFC 9110 §9.3.6), written by hand rather than
/// with NIOHTTP1's decoder: a 2xx answer ends HTTP on this connection, and the bytes right after
/// the response head are already tunnel data, which must be handed on untouched. Owning the
/// parse makes that, and the size limit below, simple to get exactly right.
package struct HTTPConnectClientHandshake: ProxyHandshake {
    /// The most bytes of response heads (interim 1xx heads included) accepted before the
    /// tunnel is up. Real proxies answer in well under 1 KiB; the limit keeps a hostile or
    /// broken proxy from making the client buffer without end.
    package static let maximumResponseHeadBytes = 16 * 1024

    private enum State: Sendable {
        case idle
        case awaitingResponse
        case established
        case failed
    }

    private var state = State.idle
    private let authority: String
    private let credential: ProxyCredential?
    /// Bytes of response heads consumed so far (interim responses).
    private var consumedHeadBytes = 0
    /// How far into the unconsumed bytes the search for the end of the head has got, so a proxy
    /// that trickles its answer byte by byte costs linear, not quadratic, time.
    private var scannedBytes = 0

    /// `authority` is `host:port` as it goes on the request line (IPv6 in brackets); see
    /// ``ProxyTunnel`` for how it is built and checked. A credential is sent as `Basic`; its
    /// user name may not contain a colon (RFC 7617), since the proxy could not tell where the
    /// password starts.
    package init(authority: String, credential: ProxyCredential?) throws(ProxyError) {
        if let credential, credential.username.contains(":") {
            throw .invalidCredential("HTTP Basic user names cannot contain a colon")
        }
        self.authority = authority
        self.credential = credential
    }

    package mutating func start() -> ProxyHandshakeAction {
        guard case .idle = state else { return .waitForData }
        state = .awaitingResponse
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credential {
            request += "Proxy-Authorization: \(credential.basicAuthorization)\r\n"
        }
        request += "\r\n"
        return .write(ByteBuffer(string: request))
    }

    package mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        switch state {
        case .idle:
            return fail(.malformedResponse("HTTP proxy spoke before the request"))
        case .established:
            return .established
        case .failed:
            return .waitForData
        case .awaitingResponse:
            break
        }
        while true {
            guard let headLength = endOfHead(in: buffer) else {
                if consumedHeadBytes + buffer.readableBytes > Self.maximumResponseHeadBytes {
                    return fail(.responseTooLarge(limit: Self.maximumResponseHeadBytes))
                }
                return .waitForData
            }
            consumedHeadBytes += headLength
            scannedBytes = 0
            guard consumedHeadBytes <= Self.maximumResponseHeadBytes else {
                return fail(.responseTooLarge(limit: Self.maximumResponseHeadBytes))
            }
            guard let head = buffer.readString(length: headLength) else { return .waitForData }
            let status: Int
            switch Self.statusCode(ofHead: head) {
            case .success(let code): status = code
            case .failure(let error): return fail(error)
            }
            switch status {
            case 101:
                return fail(.malformedResponse("101 Switching Protocols in answer to CONNECT"))
            case 100..<200:
                // Interim answer (100 Continue, 103 Early Hints): the real one follows.
                continue
            case 200..<300:
                state = .established
                return .established
            case 407, 401:
                // 407 is the standard answer; tinyproxy answers wrong credentials with 401. To
                // a CONNECT either can only mean the proxy refuses our authorisation.
                return fail(.httpProxyAuthenticationRequired(credentialSent: credential != nil))
            default:
                return fail(.httpStatus(status))
            }
        }
    }

    /// The length of the response head (through the empty line) at the start of `buffer`, or
    /// nil when it has not all arrived. Bare `\n` line ends are accepted as well as `\r\n`
    /// (RFC 9112 §2.2 lets a recipient do so).
    private mutating func endOfHead(in buffer: ByteBuffer) -> Int? {
        let found: Int? = buffer.withUnsafeReadableBytes { bytes in
            var index = max(0, scannedBytes - 3)
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
                    if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\r"),
                        bytes[index + 2] == UInt8(ascii: "\n")
                    {
                        return index + 3
                    }
                }
                index += 1
            }
            return nil
        }
        if found == nil { scannedBytes = buffer.readableBytes }
        return found
    }

    /// The status code of a response head: `HTTP/1.x SP 3DIGIT [SP reason]` on its first line.
    static func statusCode(ofHead head: String) -> Result<Int, ProxyError> {
        // Bytes, not Characters: "\r\n" is one Character, so a Character scan would run past the
        // end of a status line that has no reason phrase ("HTTP/1.1 200\r\n").
        let firstLine = head.utf8.prefix(while: { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") })
        let parts = firstLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].elementsEqual("HTTP/1.1".utf8) || parts[0].elementsEqual("HTTP/1.0".utf8) else {
            return .failure(.malformedResponse("not an HTTP/1.x status line"))
        }
        guard parts[1].count == 3, parts[1].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let code = Int(String(decoding: parts[1], as: UTF8.self)), (100...599).contains(code)
        else {
            return .failure(.malformedResponse("bad status code"))
        }
        return .success(code)
    }

    private mutating func fail(_ error: ProxyError) -> ProxyHandshakeAction {
        state = .failed
        return .failed(error)
    }
}
