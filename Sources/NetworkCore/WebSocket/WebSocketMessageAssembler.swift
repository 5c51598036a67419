import NIOCore

/// Turns a peer's frames into whole messages (RFC 6455 §5.4): a data message's fragments are
/// joined, control frames come through between them, and every framing rule the decoder below
/// does not check is checked here. One `mutating` method per frame, returning what to do; no I/O.
///
/// Memory is bounded: a message whose fragments would add up to more than
/// `maximumMessageSize` is refused as soon as the fragment that crosses the bound arrives.
package struct WebSocketMessageAssembler: Sendable {
    /// What a frame leads to.
    package enum Action: Equatable, Sendable {
        /// Nothing yet: a fragment was kept.
        case none
        /// A whole text or binary message.
        case message(WebSocketMessageKind, ByteBuffer)
        case ping(ByteBuffer)
        case pong(ByteBuffer)
        /// The peer starts (or answers) the close handshake.
        case close(WebSocketClosePayload)
        /// The peer broke a rule: close with the failure's code and fail the connection.
        case fail(WebSocketFailure)
    }

    /// One frame, as the decoder read it (payload already unmasked).
    package struct Frame: Sendable {
        package var fin: Bool
        /// The raw opcode (0–15).
        package var opcode: UInt8
        /// Any of the three reserved bits set.
        package var reservedBits: Bool
        package var masked: Bool
        package var payload: ByteBuffer

        package init(fin: Bool, opcode: UInt8, reservedBits: Bool = false, masked: Bool, payload: ByteBuffer) {
            self.fin = fin
            self.opcode = opcode
            self.reservedBits = reservedBits
            self.masked = masked
            self.payload = payload
        }
    }

    private let role: WebSocketRole
    private let maximumMessageSize: Int
    /// The data message being assembled: its kind and the fragments so far.
    private var partial: (kind: WebSocketMessageKind, bytes: ByteBuffer)?
    /// After a failure or the peer's close, nothing more is read.
    private var finished = false

    package init(role: WebSocketRole, maximumMessageSize: Int) {
        self.role = role
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes held for a message not yet whole.
    package var bufferedBytes: Int { partial?.bytes.readableBytes ?? 0 }

    package mutating func frameReceived(_ frame: Frame) -> Action {
        guard !finished else { return .none }
        let action = decide(frame)
        switch action {
        case .fail, .close:
            finished = true
            partial = nil
        case .none, .message, .ping, .pong:
            break
        }
        return action
    }

    private mutating func decide(_ frame: Frame) -> Action {
        // No extension is negotiated, so no reserved bit may be set.
        guard !frame.reservedBits else { return .fail(.protocolError) }
        // Clients mask every frame, servers none.
        guard frame.masked == (role == .server) else { return .fail(.protocolError) }
        guard let kind = WebSocketMessageKind(rawValue: frame.opcode) else { return .fail(.protocolError) }
        if kind.isControl {
            guard frame.fin, frame.payload.readableBytes <= 125 else { return .fail(.protocolError) }
            switch kind {
            case .ping: return .ping(frame.payload)
            case .pong: return .pong(frame.payload)
            default:
                switch WebSocketClosePayload.parse(frame.payload) {
                case .success(let payload): return .close(payload)
                case .failure(let failure): return .fail(failure)
                }
            }
        }
        var message: (kind: WebSocketMessageKind, bytes: ByteBuffer)
        if kind == .continuation {
            guard let partial else { return .fail(.protocolError) }
            message = partial
            guard frame.payload.readableBytes <= maximumMessageSize - message.bytes.readableBytes else {
                return .fail(.messageTooBig)
            }
            self.partial = nil  // (keeps the buffer uniquely referenced for the append)
            var payload = frame.payload
            message.bytes.writeBuffer(&payload)
        } else {
            // A new data message while another is unfinished.
            guard partial == nil else { return .fail(.protocolError) }
            guard frame.payload.readableBytes <= maximumMessageSize else { return .fail(.messageTooBig) }
            message = (kind, frame.payload)
        }
        guard frame.fin else {
            partial = message
            return .none
        }
        if message.kind == .text && !message.bytes.readableBytesView.isValidUTF8 { return .fail(.invalidPayload) }
        return .message(message.kind, message.bytes)
    }
}
