/// The WebSocket facts of one message, as they travel between the flow and the WebSocket layer
/// in `FramedMessage.metadata`: its kind, the close code of a close message, and for a ping the
/// application sends, what to call when its pong arrives. Immutable; the facade builds one per
/// send from `NWProtocolWebSocket.Metadata` and wraps the one of each received message.
package final class WebSocketMessageInfo: Sendable {
    package let kind: WebSocketMessageKind
    /// A close message's status code; nil for other kinds, and for a close frame without one
    /// (RFC 6455's 1005, "no status received").
    package let closeCode: UInt16?
    /// Called once on the connection's event loop with nil when the pong for this ping arrives,
    /// or with an error when the connection ends first.
    package let pongHandler: (@Sendable (FlowError?) -> Void)?

    /// One shared by every plain binary (and text) message sent: it holds nothing else, and an
    /// object per send cost an allocation each.
    package static let binary = WebSocketMessageInfo(kind: .binary)
    package static let text = WebSocketMessageInfo(kind: .text)

    /// The info of a message of `kind` that carries nothing else: shared for binary and text.
    package static func plain(_ kind: WebSocketMessageKind) -> WebSocketMessageInfo {
        switch kind {
        case .binary: binary
        case .text: text
        default: WebSocketMessageInfo(kind: kind)
        }
    }

    package init(kind: WebSocketMessageKind, closeCode: UInt16? = nil, pongHandler: (@Sendable (FlowError?) -> Void)? = nil) {
        self.kind = kind
        self.closeCode = closeCode
        self.pongHandler = pongHandler
    }
}
