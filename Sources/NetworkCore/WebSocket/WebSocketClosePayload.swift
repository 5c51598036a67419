import NIOCore

/// The body of a close frame (RFC 6455 §5.5.1): nothing, or a two-byte status code followed by a
/// UTF-8 reason.
package struct WebSocketClosePayload: Equatable, Sendable {
    /// Nil when the frame carried no code.
    package var code: UInt16?
    package var reason: ByteBuffer

    package init(code: UInt16?, reason: ByteBuffer = ByteBuffer()) {
        self.code = code
        self.reason = reason
    }

    /// Reads a peer's close frame body. A one-byte body, a code no endpoint may send (below 1000,
    /// 1004–1006, 1015, 1016–2999 unassigned, 5000 and up) is a protocol error; a reason that is
    /// not UTF-8 is invalid data.
    package static func parse(_ body: ByteBuffer) -> Result<WebSocketClosePayload, WebSocketFailure> {
        var body = body
        guard body.readableBytes > 0 else { return .success(WebSocketClosePayload(code: nil)) }
        guard let code = body.readInteger(as: UInt16.self) else { return .failure(.protocolError) }
        guard isSendable(code) else { return .failure(.protocolError) }
        guard body.readableBytesView.isValidUTF8 else { return .failure(.invalidPayload) }
        return .success(WebSocketClosePayload(code: code, reason: body))
    }

    /// Whether an endpoint may put `code` in a close frame: 1000–1003, 1007–1014 (those
    /// registered with IANA), and 3000–4999 (libraries, frameworks and applications).
    package static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// The frame body: the code (when there is one) and the reason, cut to the 123 bytes a control
    /// frame leaves for it (at a character boundary).
    package func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        guard let code else { return allocator.buffer(capacity: 0) }
        var body = allocator.buffer(capacity: 2 + min(reason.readableBytes, 123))
        body.writeInteger(code)
        var reason = Array(reason.readableBytesView)
        if reason.count > 123 {
            reason = Array(reason.prefix(123))
            // Back off to the last whole UTF-8 character.
            while !reason.isEmpty && !reason.isValidUTF8 { reason.removeLast() }
        }
        body.writeBytes(reason)
        return body
    }
}

extension Collection<UInt8> {
    /// Whether the bytes are well-formed UTF-8.
    package var isValidUTF8: Bool {
        var iterator = makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
