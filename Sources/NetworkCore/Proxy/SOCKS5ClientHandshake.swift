import NIOCore

/// The client side of SOCKS5 (RFC 1928) with no authentication or user name and password
/// (RFC 1929), for the CONNECT command.
///
/// NIOSOCKS's client handler offers no authentication at all (it asserts on anything but "none
/// required"), so this is written here. The sequence is: greeting → method choice →
/// (user/password → status) → CONNECT request → reply.
package struct SOCKS5ClientHandshake: ProxyHandshake {
    private enum State: Sendable {
        case idle
        case awaitingMethodChoice
        case awaitingAuthenticationStatus
        case awaitingReply
        case established
        case failed
    }

    private static let version: UInt8 = 0x05
    private static let methodNone: UInt8 = 0x00
    private static let methodUsernamePassword: UInt8 = 0x02
    private static let methodNoneAcceptable: UInt8 = 0xFF
    private static let usernamePasswordVersion: UInt8 = 0x01
    private static let commandConnect: UInt8 = 0x01

    private var state = State.idle
    private let destination: SOCKS5Address
    private let port: UInt16
    private let credential: ProxyCredential?

    /// Checks now what RFC 1928/1929 can carry, so a bad name or credential fails before
    /// anything is sent: names of 1 to 255 bytes, user names of 1 to 255 bytes, passwords of
    /// at most 255 bytes.
    package init(destination: SOCKS5Address, port: UInt16, credential: ProxyCredential?) throws(ProxyError) {
        if case .domain(let name) = destination, name.utf8.isEmpty || name.utf8.count > 255 {
            throw .invalidTarget("SOCKS5 host names must be 1 to 255 bytes long")
        }
        if let credential {
            guard (1...255).contains(credential.username.utf8.count) else {
                throw .invalidCredential("SOCKS5 user names must be 1 to 255 bytes long")
            }
            guard credential.password.utf8.count <= 255 else {
                throw .invalidCredential("SOCKS5 passwords must be at most 255 bytes long")
            }
        }
        self.destination = destination
        self.port = port
        self.credential = credential
    }

    /// Sends the greeting. User/password is offered only when there is a credential, and then
    /// "none" too, so a proxy that needs nothing is not forced to ask.
    package mutating func start() -> ProxyHandshakeAction {
        guard case .idle = state else { return .waitForData }
        state = .awaitingMethodChoice
        let methods = credential == nil ? [Self.methodNone] : [Self.methodNone, Self.methodUsernamePassword]
        return .write(ByteBuffer(bytes: [Self.version, UInt8(methods.count)] + methods))
    }

    package mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        switch state {
        case .idle:
            return fail(.malformedResponse("SOCKS5 proxy spoke before the greeting"))
        case .awaitingMethodChoice:
            return methodChoice(&buffer)
        case .awaitingAuthenticationStatus:
            return authenticationStatus(&buffer)
        case .awaitingReply:
            return reply(&buffer)
        case .established:
            return .established
        case .failed:
            return .waitForData
        }
    }

    private mutating func methodChoice(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        guard let bytes = buffer.readBytes(length: 2) else { return .waitForData }
        guard bytes[0] == Self.version else {
            return fail(.malformedResponse("SOCKS version \(bytes[0]) in the method choice"))
        }
        switch bytes[1] {
        case Self.methodNone:
            state = .awaitingReply
            return .write(connectRequest())
        case Self.methodUsernamePassword where credential != nil:
            state = .awaitingAuthenticationStatus
            return .write(authenticationRequest())
        case Self.methodNoneAcceptable:
            return fail(.socksNoAcceptableMethod)
        default:
            return fail(.malformedResponse("SOCKS5 proxy chose method \(bytes[1]), which was not offered"))
        }
    }

    private mutating func authenticationStatus(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        guard let bytes = buffer.readBytes(length: 2) else { return .waitForData }
        // RFC 1929 says version 1; some servers echo the SOCKS version instead. Either is
        // unambiguous here.
        guard bytes[0] == Self.usernamePasswordVersion || bytes[0] == Self.version else {
            return fail(.malformedResponse("version \(bytes[0]) in the authentication status"))
        }
        guard bytes[1] == 0x00 else { return fail(.socksAuthenticationFailed(status: bytes[1])) }
        state = .awaitingReply
        return .write(connectRequest())
    }

    private mutating func reply(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction {
        // VER REP RSV ATYP, then BND.ADDR and BND.PORT. A refusal is reported as soon as REP
        // is known: proxies often close right after it.
        guard buffer.readableBytes >= 2, let head = buffer.getBytes(at: buffer.readerIndex, length: 2) else {
            return .waitForData
        }
        guard head[0] == Self.version else {
            return fail(.malformedResponse("SOCKS version \(head[0]) in the reply"))
        }
        let code = SOCKS5ReplyCode(rawValue: head[1])
        guard code == .succeeded else { return fail(.socksReply(code)) }
        guard let header = buffer.getBytes(at: buffer.readerIndex, length: 4) else { return .waitForData }
        let addressLength: Int
        switch header[3] {
        case 0x01:
            addressLength = 4
        case 0x04:
            addressLength = 16
        case 0x03:
            guard let length = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self) else {
                return .waitForData
            }
            addressLength = 1 + Int(length)
        default:
            return fail(.malformedResponse("address type \(header[3]) in the reply"))
        }
        let total = 4 + addressLength + 2
        guard buffer.readableBytes >= total else { return .waitForData }
        buffer.moveReaderIndex(forwardBy: total)
        state = .established
        return .established
    }

    private func authenticationRequest() -> ByteBuffer {
        let username = Array(credential?.username.utf8 ?? "".utf8)
        let password = Array(credential?.password.utf8 ?? "".utf8)
        var buffer = ByteBuffer()
        buffer.writeInteger(Self.usernamePasswordVersion)
        buffer.writeInteger(UInt8(truncatingIfNeeded: username.count))
        buffer.writeBytes(username)
        buffer.writeInteger(UInt8(truncatingIfNeeded: password.count))
        buffer.writeBytes(password)
        return buffer
    }

    private func connectRequest() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeBytes([Self.version, Self.commandConnect, 0x00, destination.addressType])
        buffer.writeBytes(destination.wireBytes)
        buffer.writeInteger(port)
        return buffer
    }

    private mutating func fail(_ error: ProxyError) -> ProxyHandshakeAction {
        state = .failed
        return .failed(error)
    }
}
